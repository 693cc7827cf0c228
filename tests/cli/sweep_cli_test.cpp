// `hetsim sweep` and `hetsim merge` end to end: output files, a sweep killed with SIGKILL and
// resumed, shards merged, and (built with MPI) two ranks, each checked against one process.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using hetsim::test::shell;
using hetsim::test::slurp;
using nlohmann::json;

const std::string kRoot = HETSIM_SOURCE_DIR;
const std::string kHetsim = HETSIM_BINARY;

struct Scratch {
  Scratch() {
    path = fs::temp_directory_path() /
           ("hetsim-sweep-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~Scratch() { fs::remove_all(path); }
  std::string at(const std::string& name) const { return (path / name).string(); }
  fs::path path;
  static inline int counter = 0;
};

// Llama-3.2-1B on one DGX A100: 48 points, tp 3 invalid on 8 GPUs.
std::string write_spec(const Scratch& scratch, int gbs = 32) {
  const json spec{{"base",
                   {{"cluster", kRoot + "/topologies/clusters/dgx-a100-1node.json"},
                    {"model", kRoot + "/models/configs/llama-3.2-1b.json"},
                    {"gbs", gbs},
                    {"seq-length", 2048}}},
                  {"axes",
                   {{"tp", {1, 2, 3, 4}},
                    {"pp", {1, 2}},
                    {"mbs", {1, 2}},
                    {"schedule", {"1f1b", "zb-h1", "gpipe"}}}}};
  std::ofstream(scratch.at("spec.json")) << spec.dump(1);
  return scratch.at("spec.json");
}
constexpr std::size_t kPoints = 48;

// The point lines of a sweep file, checked whole (each ends with a newline and parses), sorted
// by index; `header` receives the first line.
std::vector<json> point_lines(const std::string& path, json* header = nullptr) {
  const std::string text = slurp(path);
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  std::vector<json> lines;
  std::istringstream in(text);
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    const json parsed = json::parse(line);
    if (first) {
      if (header) *header = parsed;
      continue;
    }
    lines.push_back(parsed);
  }
  std::sort(lines.begin(), lines.end(),
            [](const json& a, const json& b) { return a["index"] < b["index"]; });
  return lines;
}

void check_every_point_once(const std::vector<json>& lines) {
  REQUIRE(lines.size() == kPoints);
  for (std::size_t i = 0; i < kPoints; ++i) CHECK(lines[i]["index"] == i);
}

int count_lines(const std::string& path) {
  const std::string text = slurp(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("a sweep writes a header and one line per point, a CSV row per point and the plot") {
  const Scratch scratch;
  const std::string spec = write_spec(scratch);
  REQUIRE(shell(kHetsim + " sweep " + spec + " --jobs 2 --out " + scratch.at("out.jsonl") +
                " --csv " + scratch.at("out.csv") + " --svg " + scratch.at("out.svg") +
                " --json > " + scratch.at("summary.json") + " 2> " + scratch.at("progress")) == 0);
  json header;
  const std::vector<json> lines = point_lines(scratch.at("out.jsonl"), &header);
  CHECK(header["sweep"]["points"] == kPoints);
  check_every_point_once(lines);
  std::size_t invalid = 0;
  for (const json& line : lines) invalid += line.contains("error");
  CHECK(invalid == 12);  // tp 3
  CHECK(count_lines(scratch.at("out.csv")) == static_cast<int>(kPoints) + 1);
  CHECK(slurp(scratch.at("out.svg")).find("Pareto front") != std::string::npos);
  const json summary = hetsim::test::read_json(scratch.at("summary.json"));
  CHECK(summary["points"] == kPoints);
  CHECK(summary["invalid"] == 12);
  CHECK(summary["pareto_front"].size() >= 1);
  // Not a terminal: plain progress lines, the last one at 100%.
  CHECK(slurp(scratch.at("progress")).find("hetsim sweep: 48/48 points (100%)") !=
        std::string::npos);
}

TEST_CASE("a sweep point's report is the report of `run` with the same flags") {
  const Scratch scratch;
  const std::string spec = write_spec(scratch);
  REQUIRE(shell(kHetsim + " sweep " + spec + " --out " + scratch.at("out.jsonl") +
                " > /dev/null 2>&1") == 0);
  const std::vector<json> lines = point_lines(scratch.at("out.jsonl"));
  const json& line = lines.at(5);
  std::string flags;
  for (const auto& [key, value] : line["point"].items())
    flags += " --" + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
  REQUIRE(shell(kHetsim + " run --json --cluster " + kRoot +
                "/topologies/clusters/dgx-a100-1node.json --model " + kRoot +
                "/models/configs/llama-3.2-1b.json --gbs 32 --seq-length 2048" + flags + " > " +
                scratch.at("run.json")) == 0);
  json report = hetsim::test::read_json(scratch.at("run.json"));
  report.erase("wall_s");
  CHECK(report == line["report"]);
}

TEST_CASE("a sweep killed with SIGKILL resumes and ends with every point exactly once") {
  const Scratch scratch;
  const std::string spec = write_spec(scratch);
  const std::string out = scratch.at("out.jsonl");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // One thread, so the points come slowly enough to be killed among them.
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
      ::_exit(126);
    ::execl(kHetsim.c_str(), kHetsim.c_str(), "sweep", spec.c_str(), "--jobs", "1", "--out",
            out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Kill once a few points are in the file.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_lines(out) < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(::kill(child, SIGKILL) == 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  const int before = count_lines(out) - 1;
  CAPTURE(before);
  REQUIRE(before >= 3);
  REQUIRE(before < static_cast<int>(kPoints));  // killed mid-way
  // A kill inside a write would leave half a line: make one, as that kill would.
  std::ofstream(out, std::ios::app) << R"({"index":47,"point":{"mbs":2,"pp":)";

  REQUIRE(shell(kHetsim + " sweep " + spec + " --jobs 2 --out " + out +
                " --resume > /dev/null 2> " + scratch.at("err")) == 0);
  const std::vector<json> resumed = point_lines(out);
  check_every_point_once(resumed);
  CHECK(slurp(scratch.at("err")).find("hetsim sweep: 48/48") != std::string::npos);

  REQUIRE(shell(kHetsim + " sweep " + spec + " --jobs 2 --out " + scratch.at("whole.jsonl") +
                " > /dev/null 2>&1") == 0);
  CHECK(resumed == point_lines(scratch.at("whole.jsonl")));

  // Resuming a finished sweep runs nothing and changes nothing.
  const std::string finished = slurp(out);
  REQUIRE(shell(kHetsim + " sweep " + spec + " --out " + out + " --resume > /dev/null 2>&1") == 0);
  CHECK(slurp(out) == finished);
}

TEST_CASE("a sweep killed before its header line was whole starts again on resume") {
  const Scratch scratch;
  const std::string out = scratch.at("out.jsonl");
  std::ofstream(out) << R"({"sweep":{"base":{"clus)";
  REQUIRE(shell(kHetsim + " sweep " + write_spec(scratch) + " --shard 1/8 --out " + out +
                " --resume > /dev/null 2>&1") == 0);
  json header;
  CHECK(point_lines(out, &header).size() == 6);
  CHECK(header["sweep"]["shard"] == "1/8");
}

TEST_CASE("resume refuses a file that holds data but no sweep header, and leaves it as it was") {
  // Before: 1000 NUL bytes (no newline, so no whole header line) were replaced with rc 0.
  const Scratch scratch;
  const std::string out = scratch.at("out.jsonl");
  const std::string zeros(1000, '\0');
  std::ofstream(out, std::ios::binary) << zeros;
  REQUIRE(shell(kHetsim + " sweep " + write_spec(scratch) + " --shard 1/8 --out " + out +
                " --resume > /dev/null 2> " + scratch.at("err")) == 1);
  const std::string err = slurp(scratch.at("err"));
  CHECK(err == "hetsim: error: " + out +
                   ": --resume: the file holds data that is not the start of this sweep's header; expected a "
                   "file this sweep wrote (remove it, or choose another --out)\n");
  CHECK(slurp(out) == zeros);
}

TEST_CASE("resume refuses the file of another sweep and leaves it as it was") {
  const Scratch scratch;
  const std::string out = scratch.at("out.jsonl");
  REQUIRE(shell(kHetsim + " sweep " + write_spec(scratch, 32) + " --shard 0/8 --out " + out +
                " > /dev/null 2>&1") == 0);
  const std::string before = slurp(out);
  const std::string spec = write_spec(scratch, 64);
  REQUIRE(shell(kHetsim + " sweep " + spec + " --shard 0/8 --out " + out +
                " --resume > /dev/null 2> " + scratch.at("err")) == 1);
  const std::string err = slurp(scratch.at("err"));
  CHECK(err.rfind("hetsim: error: " + out + ": line 1: the file holds another sweep (", 0) == 0);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(slurp(out) == before);
}

TEST_CASE("shards merged equal the one-process sweep") {
  const Scratch scratch;
  const std::string spec = write_spec(scratch);
  REQUIRE(shell(kHetsim + " sweep " + spec + " --out " + scratch.at("whole.jsonl") + " --csv " +
                scratch.at("whole.csv") + " > " + scratch.at("whole.txt") + " 2> /dev/null") == 0);
  std::string shards;
  for (int i = 0; i < 3; ++i) {
    const std::string file = scratch.at("shard-" + std::to_string(i) + ".jsonl");
    REQUIRE(shell(kHetsim + " sweep " + spec + " --shard " + std::to_string(i) +
                  "/3 --jobs 1 --out " + file + " > /dev/null 2>&1") == 0);
    json header;
    CHECK(point_lines(file, &header).size() == 16);
    CHECK(header["sweep"]["shard"] == std::to_string(i) + "/3");
    shards += " " + file;
  }
  // A missing shard is an error, not a smaller sweep.
  REQUIRE(shell(kHetsim + " merge " + scratch.at("shard-0.jsonl") + " " +
                scratch.at("shard-1.jsonl") + " --out " + scratch.at("partial.jsonl") +
                " > /dev/null 2> " + scratch.at("err")) == 1);
  CHECK(slurp(scratch.at("err")) ==
        "hetsim: error: 16 of 48 points are missing, point 2 the first; merge every shard's file "
        "(and resume "
        "unfinished shards with sweep --resume)\n");
  CHECK_FALSE(fs::exists(scratch.at("partial.jsonl")));

  REQUIRE(shell(kHetsim + " merge" + shards + " --out " + scratch.at("merged.jsonl") + " --csv " +
                scratch.at("merged.csv") + " > " + scratch.at("merged.txt")) == 0);
  json whole_header, merged_header;
  CHECK(point_lines(scratch.at("merged.jsonl"), &merged_header) ==
        point_lines(scratch.at("whole.jsonl"), &whole_header));
  CHECK(merged_header == whole_header);
  CHECK(slurp(scratch.at("merged.csv")) == slurp(scratch.at("whole.csv")));
  CHECK(slurp(scratch.at("merged.txt")) == slurp(scratch.at("whole.txt")));
}

TEST_CASE("bad sweep input: one line naming the file, the JSON path or the flag") {
  const Scratch scratch;
  std::ofstream(scratch.at("bad.json")) << R"({"axes": {"tp": [1], "sequence-length": [4096]}})";
  REQUIRE(shell(kHetsim + " sweep " + scratch.at("bad.json") + " > " + scratch.at("out") + " 2> " +
                scratch.at("err")) == 1);
  CHECK(slurp(scratch.at("err")) ==
        "hetsim: error: " + scratch.at("bad.json") +
            ": /axes/sequence-length: got unknown key \"sequence-length\"; expected a known "
            "key; did you mean \"seq-length\"?\n");
  CHECK(slurp(scratch.at("out")).empty());
  REQUIRE(shell(kHetsim + " sweep " + write_spec(scratch) + " --resume 2> " + scratch.at("err")) ==
          1);
  CHECK(slurp(scratch.at("err")) ==
        "hetsim: error: --resume: needs --out FILE.jsonl, the file to resume\n");
  REQUIRE(shell(kHetsim + " sweep " + write_spec(scratch) + " --shard 3/3 2> " +
                scratch.at("err")) == 1);
  CHECK(slurp(scratch.at("err")) ==
        "hetsim: error: --shard: got \"3/3\"; expected i/N with 0 <= i < N, e.g. 0/4\n");
}

#ifdef HETSIM_MPIEXEC
TEST_CASE("mpirun -n 2: rank 0 writes one file equal to the one-process sweep") {
  const Scratch scratch;
  const std::string spec = write_spec(scratch);
  REQUIRE(shell(kHetsim + " sweep " + spec + " --out " + scratch.at("one.jsonl") + " > " +
                scratch.at("one.txt") + " 2> /dev/null") == 0);
  // Open MPI's own allocations are reported as leaks under LeakSanitizer; they are not hetsim's.
  REQUIRE(shell("ASAN_OPTIONS=detect_leaks=0 " + std::string(HETSIM_MPIEXEC) +
                " --allow-run-as-root --oversubscribe -n 2 " + kHetsim + " sweep " + spec +
                " --jobs 1 --out " + scratch.at("two.jsonl") + " > " + scratch.at("two.txt") +
                " 2> " + scratch.at("err")) == 0);
  json one_header, two_header;
  CHECK(point_lines(scratch.at("two.jsonl"), &two_header) ==
        point_lines(scratch.at("one.jsonl"), &one_header));
  CHECK(two_header == one_header);
  CHECK(slurp(scratch.at("two.txt")) == slurp(scratch.at("one.txt")));  // the summary, printed once
}
#endif

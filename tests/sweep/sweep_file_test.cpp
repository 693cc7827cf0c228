// The JSON-lines file of a sweep: whole lines, a torn last line dropped on reading, and resume
// running only what the file lacks, refusing a file of another sweep.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>

#include "base/error.hpp"
#include "tools/sweep/sweep_file.hpp"

using namespace hetsim::sweep;
using nlohmann::json;

namespace {

struct TempFile {
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("hetsim-sweep-file-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
          .string();
  ~TempFile() { std::filesystem::remove(path); }
  static inline int counter = 0;
};

SweepSpec three_points() {
  return parse_sweep_spec(json::parse(R"({"base": {"gbs": 64}, "axes": {"tp": [1, 2, 4]}})"),
                          "spec.json");
}

json point_line(const SweepSpec& spec, std::size_t index) {
  return {{"index", index},
          {"point", spec.point(index)},
          {"error", "reason " + std::to_string(index)}};
}

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE(
    "lines written are read back, and a torn last line is dropped with the bytes before it kept") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
    writer.write(point_line(spec, 2));
    writer.write(point_line(spec, 0));
  }
  const auto whole = std::filesystem::file_size(file.path);
  append(file.path, R"({"index": 1, "point": {"tp")");
  const SweepFile read = read_sweep_file(file.path);
  CHECK(read.torn);
  CHECK(read.whole_bytes == whole);
  CHECK(read.header == sweep_header(spec, Shard{}));
  REQUIRE(read.lines.size() == 2);
  CHECK(read.lines[0] == point_line(spec, 2));

  const auto pending =
      points_to_resume(read, file.path, sweep_header(spec, Shard{}), spec, {0, 1, 2});
  CHECK(pending == std::vector<std::size_t>{1});
}

TEST_CASE("the header names the base job, the point count and the shard") {
  const SweepSpec spec = three_points();
  CHECK(sweep_header(spec, Shard{}) ==
        json::parse(R"({"sweep": {"base": {"gbs": 64}, "points": 3}})"));
  CHECK(sweep_header(spec, Shard{1, 4}) ==
        json::parse(R"({"sweep": {"base": {"gbs": 64}, "points": 3, "shard": "1/4"}})"));
}

TEST_CASE("resume refuses a file of another sweep or with a point the spec does not have there") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
    writer.write(point_line(spec, 1));
  }
  const SweepFile read = read_sweep_file(file.path);
  const SweepSpec other =
      parse_sweep_spec(json::parse(R"({"base": {"gbs": 32}, "axes": {"tp": [1, 2, 4]}})"), "s");
  CHECK_THROWS_WITH_AS(
      points_to_resume(read, "out.jsonl", sweep_header(other, Shard{}), other, {0, 1, 2}),
      doctest::Contains("out.jsonl: line 1: the file holds another sweep"), hetsim::Error);
  const SweepSpec reordered =
      parse_sweep_spec(json::parse(R"({"base": {"gbs": 64}, "axes": {"tp": [4, 1, 2]}})"), "s");
  CHECK_THROWS_WITH_AS(
      points_to_resume(read, "out.jsonl", sweep_header(reordered, Shard{}), reordered, {0, 1, 2}),
      "out.jsonl: line 2: point 1 {\"tp\":2} is not the spec's point of that index; --resume needs "
      "the spec the sweep was started with",
      hetsim::Error);
}

TEST_CASE("a broken line that is not the last is an error naming the file and line") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
  }
  append(file.path, "{\"index\": 0\n");
  append(file.path, point_line(spec, 1).dump() + "\n");
  CHECK_THROWS_WITH_AS(read_sweep_file(file.path),
                       doctest::Contains((file.path + ": line 2: got {\"index\": 0;").c_str()),
                       hetsim::Error);

  const TempFile not_sweep;
  append(not_sweep.path, "{\"iteration_time_s\": 1}\n");
  CHECK_THROWS_WITH_AS(
      read_sweep_file(not_sweep.path),
      doctest::Contains(": line 1: got {\"iteration_time_s\": 1}; expected the header"),
      hetsim::Error);
  // A directory used to read as "DIR: empty".
  const std::string directory = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH_AS(read_sweep_file(directory),
                       (directory + ": is a directory; expected a hetsim sweep file").c_str(), hetsim::Error);
  const TempFile empty;
  append(empty.path, "");
  CHECK_THROWS_WITH_AS(read_sweep_file(empty.path),
                       (empty.path + ": empty; expected a hetsim sweep file").c_str(),
                       hetsim::Error);
}

TEST_CASE("a duplicated point is refused on resume") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
    writer.write(point_line(spec, 1));
    writer.write(point_line(spec, 1));
  }
  CHECK_THROWS_WITH_AS(points_to_resume(read_sweep_file(file.path), "f",
                                        sweep_header(spec, Shard{}), spec, {0, 1, 2}),
                       "f: line 3: point 1 appears twice", hetsim::Error);
}

TEST_CASE("a point line whose report the summary cannot read is refused naming its JSON path") {
  // Before: "fast", null or [] ended in an internal type_error after merge had written --out;
  // {}, "oom": 5 and a negative rate passed silently.
  const SweepSpec spec = three_points();
  const json good_report = {{"oom", json::array()},
                            {"tokens_per_s", 1000.0},
                            {"cost_usd", {{"per_million_tokens", 2.5}}}};
  const auto refused = [&](const std::function<void(json&)>& edit) {
    const TempFile file;
    {
      LineWriter writer(file.path, false);
      writer.write(sweep_header(spec, Shard{}));
      json line = {{"index", 0}, {"point", spec.point(0)}, {"report", good_report}};
      edit(line);
      writer.write(line);
    }
    try {
      read_sweep_file(file.path);
    } catch (const hetsim::Error& e) {
      const std::string message = e.what();
      CHECK(message.rfind(file.path + ": line 2: ", 0) == 0);
      return message.substr(file.path.size() + std::string(": line 2: ").size());
    }
    return std::string("accepted");
  };
  CHECK(refused([](json&) {}) == "accepted");
  CHECK(refused([](json& l) { l["report"]["tokens_per_s"] = "fast"; }) ==
        "/report/tokens_per_s: got \"fast\"; expected a number >= 0");
  CHECK(refused([](json& l) { l["report"]["tokens_per_s"] = -1; }) ==
        "/report/tokens_per_s: got -1; expected a number >= 0");
  CHECK(refused([](json& l) { l["report"] = nullptr; }) == "/report: got null; expected a run report object");
  CHECK(refused([](json& l) { l["report"] = json::object(); }) ==
        "/report/oom: got nothing; expected the list of GPUs out of memory");
  CHECK(refused([](json& l) { l["report"]["oom"] = 5; }) ==
        "/report/oom: got 5; expected the list of GPUs out of memory");
  CHECK(refused([](json& l) { l["report"]["cost_usd"] = json::array(); }) ==
        "/report/cost_usd/per_million_tokens: got []; expected dollars >= 0");
  CHECK(refused([](json& l) { l["index"] = -3; }) == "/index: got -3; expected a point index >= 0");
  CHECK(refused([](json& l) {
          l["report"]["tokens_per_s"] = 0;
          l["report"]["cost_usd"]["per_million_tokens"] = nullptr;
        }) == "accepted");  // a run of no tokens has no cost per token
}

TEST_CASE("a second writer of the same sweep file is refused, naming the first one's pid") {
  // Before: two sweeps on one --out both exited 0, leaving torn and duplicated lines.
  const SweepSpec spec = three_points();
  const TempFile file;
  LineWriter first(file.path, false);
  first.write(sweep_header(spec, Shard{}));
  CHECK_THROWS_WITH_AS(LineWriter(file.path, false),
                       (file.path + ": another process (pid " + std::to_string(::getpid()) +
                        ") is writing this file; expected one writer at a time")
                           .c_str(),
                       hetsim::Error);
  // The refused writer cut nothing.
  CHECK(read_sweep_file(file.path).header == sweep_header(spec, Shard{}));
}

// Bad input through the command line, one test per class: each gives a one-line error naming the
// file, the JSON path and what was expected, a non-zero exit, and no output file.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;
const std::string kBad = kRoot + "/tests/cli/bad_inputs/";

struct Outcome {
  int exit_code = 0;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs hetsim with `args` in a scratch directory; the trace goes to trace.json there.
Outcome run_hetsim(const std::string& args, const std::filesystem::path& dir) {
  const std::string command = std::string(HETSIM_BINARY) + " " + args + " > " + (dir / "out").string() +
                              " 2> " + (dir / "err").string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

struct Scratch {
  Scratch() {
    path = std::filesystem::temp_directory_path() /
           ("hetsim-cli-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~Scratch() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
  static inline int counter = 0;
};

// Runs `hetsim run ARGS --trace T` and checks the error contract; returns the message.
std::string run_error(const std::string& args) {
  Scratch scratch;
  const auto trace = scratch.path / "trace.json";
  const Outcome o = run_hetsim("run " + args + " --trace " + trace.string(), scratch.path);
  CHECK(o.exit_code == 1);
  CHECK(o.out.empty());
  // Exactly one line, prefixed, and no trace (nor its temporary) left behind.
  CHECK(o.err.rfind("hetsim: error: ", 0) == 0);
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  CHECK(std::distance(std::filesystem::directory_iterator(scratch.path),
                      std::filesystem::directory_iterator{}) == 2);  // out and err only
  return o.err.substr(std::string("hetsim: error: ").size(),
                      o.err.size() - std::string("hetsim: error: ").size() - 1);
}

}  // namespace

TEST_CASE("an unreadable file") {
  CHECK(run_error("--cluster /nonexistent/cluster.json") ==
        "/nonexistent/cluster.json: (document): got an unreadable file; expected a readable JSON file");
}

TEST_CASE("a file that is not JSON") {
  CHECK(run_error("--cluster " + kBad + "not_json.json") ==
        kBad + "not_json.json: (document): got text that is not JSON (byte 31); expected a JSON document");
}

TEST_CASE("a missing field names its JSON path") {
  CHECK(run_error("--cluster " + kBad + "cluster_missing_field.json") ==
        kBad + "cluster_missing_field.json: /sites/0/node_groups/0/gpus_per_node: got nothing "
               "(missing); expected a value for required member \"gpus_per_node\"");
}

TEST_CASE("a field of the wrong type") {
  CHECK(run_error("--cluster " + kBad + "cluster_wrong_type.json") ==
        kBad + "cluster_wrong_type.json: /sites/0/node_groups/0/count: got \"four\"; expected an integer");
}

TEST_CASE("zero and negative bandwidths") {
  CHECK(run_error("--cluster " + kBad + "cluster_zero_bandwidth.json") ==
        kBad + "cluster_zero_bandwidth.json: /sites/0/node_groups/0/nic/bandwidth_Gbps: got 0; expected a number > 0");
  CHECK(run_error("--cluster " + kBad + "cluster_negative_bandwidth.json") ==
        kBad + "cluster_negative_bandwidth.json: /sites/0/node_groups/0/intra_node/bandwidth_GBps: got "
               "-450; expected a number > 0");
}

TEST_CASE("an unknown GPU type suggests the nearest known one") {
  const std::string message = run_error("--cluster " + kBad + "cluster_unknown_gpu.json");
  CHECK(message.rfind(kBad + "cluster_unknown_gpu.json: /sites/0/node_groups/0/gpu: got \"h100-sxn\"", 0) == 0);
  CHECK(message.find("did you mean \"h100-sxm\"?") != std::string::npos);
}

TEST_CASE("tp * pp * dp must equal the GPU count") {
  CHECK(run_error("--tp 3 --pp 1") ==
        "tp 3 x pp 1 = 3 does not divide the cluster's 32 GPUs, so tp*pp*dp cannot equal the GPU count");
}

TEST_CASE("layers must divide over the virtual stages") {
  CHECK(run_error("--tp 4 --pp 4 --vpp 3 --schedule interleaved") ==
        "32 layers are not divisible by 12 virtual pipeline stages (pp 4 x vpp 3); choose pp*vpp "
        "dividing 32 or set --decoder-first-pipeline-num-layers/--decoder-last-pipeline-num-layers");
}

TEST_CASE("the global batch must divide into micro-batches over the replicas") {
  CHECK(run_error("--gbs 30") == "global batch 30 is not divisible by micro-batch 1 x data-parallel 4 = 4");
}

TEST_CASE("an unrunnable timetable names the ops in its cycle") {
  const std::string message =
      run_error("--tp 8 --pp 2 --gbs 4 --timetable " + kBad + "deadlock_timetable.json");
  INFO(message);
  CHECK(message.find("F(mb 1, stage 1) on rank 1") != std::string::npos);
  CHECK(message.find("B(mb 0, stage 1) on rank 1") != std::string::npos);
}

TEST_CASE("an unknown option is refused with a non-zero exit") {
  Scratch scratch;
  const Outcome o = run_hetsim("run --tensor-parallel 4", scratch.path);
  CHECK(o.exit_code != 0);
  CHECK(o.err.find("--tensor-parallel") != std::string::npos);
}

TEST_CASE("validate takes a FILE or --suite, and --json only with --suite") {
  const std::pair<const char*, const char*> cases[] = {
      {"validate", "hetsim: error: validate: got no FILE; expected a FILE to check or --suite\n"},
      {"validate c.json --suite",
       "hetsim: error: validate: got FILE \"c.json\" and --suite; expected one of them\n"},
      {"validate c.json --json", "hetsim: error: validate: --json goes with --suite; expected --suite --json\n"},
  };
  for (const auto& [args, message] : cases) {
    CAPTURE(args);
    Scratch scratch;
    const Outcome o = run_hetsim(args, scratch.path);
    CHECK(o.exit_code == 1);
    CHECK(o.out.empty());
    CHECK(o.err == message);
  }
}

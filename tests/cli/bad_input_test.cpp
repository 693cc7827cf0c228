// Bad input through the command line, one test per class: each gives a one-line error naming the
// file, the JSON path and what was expected, a non-zero exit, and no output file.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>

#include "cli_test_support.hpp"

using hetsim::test::slurp;

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;
const std::string kBad = kRoot + "/tests/cli/bad_inputs/";

struct Outcome {
  int exit_code = 0;
  std::string out;
  std::string err;
};

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

// Runs `hetsim ARGS` in `scratch` and checks the error contract: exit 1, nothing on stdout,
// exactly one prefixed line on stderr; returns the message.
std::string error_of(const std::string& args, const Scratch& scratch) {
  const Outcome o = run_hetsim(args, scratch.path);
  CHECK(o.exit_code == 1);
  CHECK(o.out.empty());
  CHECK(o.err.rfind("hetsim: error: ", 0) == 0);
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  if (o.err.size() <= std::string("hetsim: error: ").size()) return o.err;
  return o.err.substr(std::string("hetsim: error: ").size(),
                      o.err.size() - std::string("hetsim: error: ").size() - 1);
}

// Runs `hetsim run ARGS --trace T` and checks the error contract; returns the message.
std::string run_error(const std::string& args) {
  Scratch scratch;
  const auto trace = scratch.path / "trace.json";
  const std::string message = error_of("run " + args + " --trace " + trace.string(), scratch);
  // No trace (nor its temporary) left behind.
  CHECK(std::distance(std::filesystem::directory_iterator(scratch.path),
                      std::filesystem::directory_iterator{}) == 2);  // out and err only
  return message;
}

// Writes `text` to NAME in `scratch`; returns its path.
std::string write_file(const Scratch& scratch, const std::string& name, const std::string& text) {
  const auto path = scratch.path / name;
  std::ofstream(path) << text;
  return path.string();
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
        kBad + "cluster_zero_bandwidth.json: /sites/0/node_groups/0/nic/bandwidth_Gbps: got 0; expected a number "
               "between 1e-06 and 1e+07");
  CHECK(run_error("--cluster " + kBad + "cluster_negative_bandwidth.json") ==
        kBad + "cluster_negative_bandwidth.json: /sites/0/node_groups/0/intra_node/bandwidth_GBps: got "
               "-450; expected a number between 1.25e-07 and 1.25e+06");
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
  CHECK(message.rfind(kBad + "deadlock_timetable.json: timetable", 0) == 0);
  CHECK(message.find("F(mb 1, stage 1) on rank 1") != std::string::npos);
  CHECK(message.find("B(mb 0, stage 1) on rank 1") != std::string::npos);
}

TEST_CASE("a negative layer count per virtual stage is refused, not ignored") {
  CHECK(run_error("--num-layers-per-virtual-pipeline-stage -2") ==
        "--num-layers-per-virtual-pipeline-stage -2: expected a layer count >= 1 (or 0, the default: no "
        "virtual stages)");
}

TEST_CASE("a timetable that does not fit the plan is named") {
  CHECK(run_error("--timetable " + kBad + "deadlock_timetable.json") ==
        kBad + "deadlock_timetable.json: the timetable has 2 ranks and 2 microbatches; the plan needs pp 2 and 16 "
               "microbatches (gbs / (mbs x dp))");
}

// Runs `hetsim ARGS`, which must not parse: exit 2, nothing on stdout, one prefixed line on
// stderr; returns the message.
std::string usage_error_of(const std::string& args) {
  Scratch scratch;
  const Outcome o = run_hetsim(args, scratch.path);
  CHECK(o.exit_code == 2);
  CHECK(o.out.empty());
  CHECK(o.err.rfind("hetsim: error: ", 0) == 0);
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  return o.err.substr(0, o.err.size() - 1);
}

TEST_CASE("a command line that does not parse is one line with exit 2, naming the nearest flag or command") {
  // Before: CLI11's own two lines ("... Run with --help for more information.") and exits 104-109.
  CHECK(usage_error_of("run --tensor-parallel 4") ==
        "hetsim: error: The following arguments were not expected: 4 --tensor-parallel; see hetsim run --help");
  CHECK(usage_error_of("run --tpp 4") ==
        "hetsim: error: The following arguments were not expected: 4 --tpp (did you mean --tp for --tpp?); "
        "see hetsim run --help");
  CHECK(usage_error_of("run --tp abc").find("--tp") != std::string::npos);
  CHECK(usage_error_of("plan --objective speed").find("speed") != std::string::npos);
  CHECK(usage_error_of("sweep").find("see hetsim sweep --help") != std::string::npos);
  CHECK(usage_error_of("serve --requests 1099511627776").find("--requests") != std::string::npos);
  CHECK(usage_error_of("nope") ==
        "hetsim: error: unknown command \"nope\"; expected one of run, schedule, validate, collective, sweep, "
        "merge, bench, serve, plan, calibrate");
  CHECK(usage_error_of("rnu").find("(did you mean run?)") != std::string::npos);
  CHECK(usage_error_of("").find("a command is required") != std::string::npos);
  // Asking for help or the version is not an error (--version used to exit 106).
  Scratch scratch;
  CHECK(run_hetsim("run --help", scratch.path).exit_code == 0);
  const Outcome version = run_hetsim("--version", scratch.path);
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("hetsim 0.1.0 (commit ", 0) == 0);
}

TEST_CASE("sizes near INT_MAX are refused, not wrapped into a crash") {
  // tp x pp used to overflow int (SIGFPE); mbs x dp likewise.
  CHECK(run_error("--tp 65536 --pp 65536") ==
        "tp 65536 x pp 65536 = 4294967296 does not divide the cluster's 32 GPUs, so tp*pp*dp cannot equal "
        "the GPU count");
  CHECK(run_error("--mbs 1073741824") ==
        "global batch 64 is not divisible by micro-batch 1073741824 x data-parallel 4 = 4294967296");
  CHECK(run_error("--mbs 536870912") ==
        "global batch 64 is not divisible by micro-batch 536870912 x data-parallel 4 = 2147483648");
}

TEST_CASE("work beyond what one iteration can replay is refused before anything is allocated") {
  // 1,073,741,824 / 4 replicas = 268M microbatches used to end in std::bad_alloc.
  CHECK(run_error("--tp 8 --pp 4 --gbs 1073741824") ==
        "gbs 1073741824 / (mbs 1 x dp 1) = 1073741824 microbatches per replica, over pp 4 x vpp 1 and 1 "
        "replicas, make 1.29e+10 op runs; expected at most 2e+07 per simulated iteration");
  // A million chunks per rank used to spend 2 GB before the layers were found not to divide.
  CHECK(run_error("--vpp 1000000 --schedule interleaved") ==
        "pp 2 x vpp 1000000 = 2000000 model chunks exceed the model's 32 layers (each chunk holds at least one)");
  CHECK(run_error("--seq-splits 1000000 --schedule seq1f1b") ==
        "--seq-splits 1000000 must be between 1 and the sequence length 8192 (segments of at least one token)");
  CHECK(run_error("--seq-splits 0") ==
        "--seq-splits 0 must be between 1 and the sequence length 8192 (segments of at least one token)");
}

TEST_CASE("non-finite and absurd bucket sizes and compression ratios are refused") {
  // inf and 1e-10 used to report no gradient reduction at all; 1 ran out of memory.
  for (const std::string value : {"inf", "nan", "-1"})
    CHECK(run_error("--ddp-bucket-size " + value) ==
          "--ddp-bucket-size " + value +
              " must be a finite number >= 0 of parameters (0: Megatron's default)");
  CHECK(run_error("--ddp-bucket-size 1") ==
        "--ddp-bucket-size 1 splits the model's 8.03e+09 parameters into 8.03e+09 buckets; expected at "
        "most 1e+05 (Megatron's default is 40M parameters)");
  CHECK(run_error("--wan-compression inf") == "--wan-compression inf must be a finite ratio >= 1");
}

TEST_CASE("an infinite collective size is refused") {
  // --bytes inf used to print null for every figure of the --json report.
  Scratch scratch;
  const Outcome o = run_hetsim("collective --bytes inf --json", scratch.path);
  CHECK(o.exit_code == 1);
  CHECK(o.out.empty());
  CHECK(o.err ==
        "hetsim: error: --bytes: got \"inf\"; expected a finite size >= 0 in bytes, optionally with K, M or G "
        "(KiB, MiB, GiB) as nccl-tests takes it, e.g. 1G\n");
  // A simulation of minutes is announced before it starts (it used to run over 65 s silently);
  // `timeout` ends it once the note is out.
  // `hetsim` runs in the background until its note is written (at most 60 s), then is killed.
  const std::string note = (scratch.path / "note").string();
  std::system((std::string(HETSIM_BINARY) + " collective --cluster " + kRoot +
               "/topologies/clusters/dgx-h100-2048node.json --gpus 16384 --algo hierarchical --bytes 1G > /dev/null 2> " +
               note + " & pid=$!; for i in $(seq 600); do [ -s " + note + " ] && break; sleep 0.1; done; kill $pid; wait $pid 2> /dev/null")
                  .c_str());
  const std::string told = slurp(note);
  CHECK(told.rfind("hetsim: note: ", 0) == 0);
  CHECK(told.find(" transfers to simulate, about ") != std::string::npos);
  // Likewise a plan search over 16,384 GPUs (it used to print nothing for minutes).
  const std::string plan_note = (scratch.path / "plan-note").string();
  std::system((std::string(HETSIM_BINARY) + " plan --wide --model " + kRoot + "/models/configs/llama-3-8b.json --cluster " +
               kRoot + "/topologies/clusters/dgx-h100-2048node.json --gbs 16384 > /dev/null 2> " + plan_note +
               " & pid=$!; for i in $(seq 600); do [ -s " + plan_note + " ] && break; sleep 0.1; done; kill $pid; wait $pid 2> /dev/null")
                  .c_str());
  CHECK(slurp(plan_note) == "hetsim: note: 10024 candidates on 1 GPU subsets of up to 16384 GPUs to bound and simulate\n");
  // --overhead-us inf likewise reached a report that was not finite.
  CHECK(error_of("collective --overhead-us inf", scratch) == "--overhead-us: got inf; expected a time in [0, 1e+07] us");
}

TEST_CASE("a GPU without the run's dtype names the GPU, the dtype and the flag to use") {
  // Before: a bf16 run on V100s silently costed its GEMMs at the 15.7 TFLOP/s fp32 peak and
  // printed "MFU inf %" (bf16 peak 0).
  const std::string v100 = kRoot + "/tests/cli/clusters/dgx1-v100.json --tp 8 --pp 1 --gbs 8 --seq-length 2048";
  CHECK(run_error("--cluster " + v100) ==
        "GPU type v100-32gb (NVIDIA V100 SXM2 32GB) has no bf16 tensor cores; train it with --fp16");
  CHECK(run_error("--cluster " + v100 + " --fp16 --fp8-format hybrid") ==
        "--fp8-format hybrid runs FP8 linear layers on a bf16 base; drop --fp16");
  CHECK(run_error("--cluster " + kRoot + "/topologies/clusters/dgx-a100-1node.json --tp 8 --pp 1 --gbs 8 --fp8-format e4m3") ==
        "GPU type a100-80gb (NVIDIA A100 SXM4 80GB) has no fp8 tensor cores; drop --fp8-format e4m3 to train "
        "it in bf16");
  CHECK(run_error("--fp8-format e5m2") == "--fp8-format: got \"e5m2\"; expected e4m3 or hybrid");
  CHECK(run_error("--fp32 --fp8-format hybrid") == "--fp8-format hybrid runs FP8 linear layers on a bf16 base; drop --fp32");
}

TEST_CASE("validate takes a FILE or --suite, and --json only with --suite") {
  const std::pair<const char*, const char*> cases[] = {
      {"validate", "hetsim: error: validate: got no FILE; expected a FILE to check or --suite\n"},
      {"validate c.json --suite",
       "hetsim: error: validate: got FILE \"c.json\" and --suite; expected one of them\n"},
      {"validate c.json --json", "hetsim: error: validate: --json goes with --suite; expected --suite --json\n"},
  };
  for (const auto& one_case : cases) {
    const auto& args = one_case.first;
    const auto& message = one_case.second;
    CAPTURE(args);
    Scratch scratch;
    const Outcome o = run_hetsim(args, scratch.path);
    CHECK(o.exit_code == 1);
    CHECK(o.out.empty());
    CHECK(o.err == message);
  }
}

TEST_CASE("interleaving by layers per virtual stage names a pp that does not divide the layers") {
  // Llama-3-405B has 126 layers; 126 / 4 is not whole, whatever the chunk size.
  CHECK(run_error("--model " + kRoot + "/models/configs/llama-3-405b.json --tp 8 --pp 4 "
                  "--num-layers-per-virtual-pipeline-stage 1") ==
        "--num-layers-per-virtual-pipeline-stage 1: the model's 126 layers do not divide into "
        "--pp 4 pipeline stages; choose a pp dividing 126");
}

TEST_CASE("virtual stages without --schedule run interleaved, as Megatron-LM does") {
  // Megatron-LM picks forward_backward_pipelining_with_interleaving whenever the model is cut
  // into virtual stages; an explicit --schedule still wins. Default model: 32 layers, pp 2.
  const auto schedule_of = [](const std::string& args) {
    Scratch scratch;
    const Outcome o = run_hetsim("run --gbs 16 --json " + args, scratch.path);
    INFO(args << ": " << o.err);
    REQUIRE(o.exit_code == 0);
    return nlohmann::json::parse(o.out).at("plan").at("schedule").get<std::string>();
  };
  CHECK(schedule_of("") == "1f1b");
  CHECK(schedule_of("--vpp 2") == "interleaved");
  CHECK(schedule_of("--num-layers-per-virtual-pipeline-stage 8") == "interleaved");
  CHECK(schedule_of("--vpp 2 --schedule bfs") == "bfs");
}

TEST_CASE("validate takes a timetable without stage_of (Megatron's looped placement)") {
  Scratch scratch;
  const std::string file = write_file(
      scratch, "t.json",
      R"({"ranks": 2, "microbatches": 2, "ops": [["F0", "F1", "B0", "B1"], ["F0", "B0", "F1", "B1"]]})");
  const Outcome o = run_hetsim("validate " + file, scratch.path);
  CHECK(o.exit_code == 0);
  CHECK(o.out == file + ": valid timetable \"custom\": 2 ranks, 2 microbatches, 1 chunks per rank\n");
}

TEST_CASE("an overlapped pair of an F and its own backward is refused by validate and schedule") {
  Scratch scratch;
  const std::string file = write_file(
      scratch, "t.json",
      R"({"ranks": 1, "microbatches": 1, "stage_of": [[0]], "ops": [["F0", "B0"]], )"
      R"("overlapped_pairs": [[0]]})");
  const std::string expected =
      file + ": timetable 'custom': overlapped_pairs[0] position 0 pairs F0 with B0 of the same chunk, its "
      "own backward; a pair's B must not need the F it runs with";
  CHECK(error_of("validate " + file, scratch) == expected);
  CHECK(error_of("schedule --timetable " + file, scratch) == expected);
}

TEST_CASE("a timetable declaring more microbatches than its ops can hold is refused on reading") {
  // Each microbatch needs an F and a B on every stage: 2 ops hold one microbatch, not 3e8 (whose
  // op index alone would take gigabytes).
  Scratch scratch;
  const std::string file = write_file(
      scratch, "t.json", R"({"ranks": 1, "microbatches": 300000000, "ops": [["F0", "B0"]]})");
  const std::string expected =
      file + ": /microbatches: got 300000000; expected at most 1: the ops list 2 ops, and each "
             "microbatch runs an F and a B on every stage (1 here)";
  CHECK(error_of("validate " + file, scratch) == expected);
  CHECK(error_of("schedule --timetable " + file, scratch) == expected);
}

TEST_CASE("a DualPipe timetable with two ranks' rows swapped is refused alike by validate and schedule") {
  // Rank 0 and rank 3 hold mirrored halves of the V; swapped, rank 0's first F needs an op that
  // rank 1 only runs after one that waits on rank 0. Both commands name the file and the first
  // op of the wait-for cycle, which has not run.
  Scratch scratch;
  const std::string exported = (scratch.path / "dualpipe.json").string();
  REQUIRE(run_hetsim("schedule --kind dualpipe --pp 4 --mb 8 --vpp 2 --w 1 --export " + exported, scratch.path)
              .exit_code == 0);
  std::ifstream in(exported);
  nlohmann::json timetable = nlohmann::json::parse(in);
  std::swap(timetable["ops"][0], timetable["ops"][3]);
  const std::string file = write_file(scratch, "swapped.json", timetable.dump());
  const std::string message = error_of("validate " + file, scratch);
  CHECK(message.rfind(file + ": timetable 'dualpipe' deadlocks: F(mb 4, stage 7) on rank 0 waits for "
                             "F(mb 4, stage 6) on rank 1",
                      0) == 0);
  CHECK(error_of("schedule --w 1 --timetable " + file, scratch) == message);
}

TEST_CASE("schedule's op times are finite, named by their flags, and --json goes alone") {
  Scratch scratch;
  CHECK(error_of("schedule --f inf", scratch) == "--f (forward time) is inf; expected a finite time > 0 and at most 1e+06");
  CHECK(error_of("schedule --comm nan", scratch) == "--comm (transfer time) is nan; expected a finite time >= 0 and at most 1e+06");
  CHECK(error_of("schedule --json --text", scratch) ==
        "--json and --text both print to standard output; give one (--svg draws the schedule to a file)");
}

TEST_CASE("validate and run refuse a timetable that cannot run with the same message") {
  // What validates must run: a deadlock, a pair of an F with its own backward and a microbatch
  // count the ops cannot hold each stop both commands with one message, each with a plan that
  // fits the timetable's ranks and microbatches.
  Scratch scratch;
  const std::string own_pair = write_file(
      scratch, "own_pair.json",
      R"({"ranks": 1, "microbatches": 1, "stage_of": [[0]], "ops": [["F0", "B0"]], )"
      R"("overlapped_pairs": [[0]]})");
  const std::string too_many = write_file(
      scratch, "too_many.json", R"({"ranks": 1, "microbatches": 300000000, "ops": [["F0", "B0"]]})");
  const std::pair<std::string, std::string> cases[] = {
      {kBad + "deadlock_timetable.json", "--tp 8 --pp 2 --gbs 4"},
      {own_pair, "--tp 8 --pp 1 --gbs 4"},
      {too_many, "--tp 8 --pp 1 --gbs 4"}};
  for (const auto& one_case : cases) {
    const auto& file = one_case.first;
    const auto& plan = one_case.second;
    CAPTURE(file);
    const std::string message = error_of("validate " + file, scratch);
    CHECK(message.rfind(file + ": ", 0) == 0);
    CHECK(run_error(plan + " --timetable " + file) == message);
  }
}

TEST_CASE("context parallelism that cannot split the sequence or the GPUs names the flag") {
  CHECK(run_error("--cp 0") == "--context-parallel-size 0 must be >= 1");
  CHECK(run_error("--cp 3 --seq-length 8193") ==
        "--seq-length 8193 is not divisible by 2 x context-parallel size 3 = 6 (causal load balancing gives "
        "each context-parallel rank two of 2 x cp equal chunks of every sequence)");
  CHECK(run_error("--cp 1073741824") ==
        "--seq-length 8192 is not divisible by 2 x context-parallel size 1073741824 = 2147483648 (causal load "
        "balancing gives each context-parallel rank two of 2 x cp equal chunks of every sequence)");
  // Before: a message about --seq-splits.
  CHECK(run_error("--seq-length 0") == "--seq-length 0 must be >= 1");
  CHECK(run_error("--context-parallel-size 3 --seq-length 8196") ==
        "tp 4 x cp 3 x pp 2 = 24 does not divide the cluster's 32 GPUs, so tp*cp*pp*dp cannot equal the GPU count");
  CHECK(run_error("--cp 2 --placement site-aware") ==
        "--placement site-aware lays out tp x pp x dp plans; it does not place context-parallel groups "
        "(--context-parallel-size 2): use --placement megatron");
}

TEST_CASE("calibrate --refit pairs every CSV with a mapping, names a missing file and wants a source for peaks") {
  const std::string data = kRoot + "/tests/data/vidur/";
  const std::string compute = data + "compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv";
  const std::string mapping = kRoot + "/models/calibration/mappings/vidur_compute.json";
  Scratch scratch;
  const std::string out = " --out " + (scratch.path / "p.json").string();
  CHECK(error_of("calibrate --refit " + compute + " --refit " + compute + " --mapping " + mapping + out, scratch) ==
        "calibrate: 2 --refit file(s) but 1 --mapping file(s); give one --mapping per --refit, paired in order");
  CHECK(error_of("calibrate --mapping " + mapping + out, scratch) ==
        "calibrate: 0 --refit file(s) but 1 --mapping file(s); give one --mapping per --refit, paired in order");
  // The second pair's CSV is missing: named, and nothing is written from the first alone.
  const std::string missing = data + "network/a100_dgx/all_gather.csv";
  CHECK(error_of("calibrate --refit " + compute + " --mapping " + mapping + " --refit " + missing + " --mapping " +
                     kRoot + "/models/calibration/mappings/vidur_all_reduce.json" + out,
                 scratch) == missing + ": (document): got an unreadable file; expected a readable CSV file");
  CHECK(error_of("calibrate --refit " + compute + " --mapping " + scratch.path.string() + "/none.json" + out,
                 scratch) ==
        scratch.path.string() + "/none.json: (document): got an unreadable file; expected a readable JSON file");
  // Peaks go into a profile only with the datasheet they come from, in a dtype a profile knows.
  CHECK(error_of("calibrate --refit " + compute + " --mapping " + mapping + " --peak-tflops 312" + out, scratch) ==
        "calibrate --refit: --peak-tflops and --hbm-gbps are recorded in the profile only with --peaks-source (the "
        "datasheet they come from)");
  CHECK(error_of("calibrate --refit " + compute + " --mapping " + mapping +
                     " --peak-tflops 312 --peak-dtype fp61 --peaks-source datasheet" + out,
                 scratch) == "command line: --peak-dtype: got fp61; expected fp32, tf32, bf16, fp16 or fp8");
  CHECK_FALSE(std::filesystem::exists(scratch.path / "p.json"));
}

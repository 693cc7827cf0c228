// Two identical runs give byte-identical traces, and JSON reports that differ only in wall_s;
// the trace passes the checks Perfetto's JSON importer applies (hetsim validate).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_test_support.hpp"

using hetsim::test::shell;
using hetsim::test::slurp;

TEST_CASE("identical runs give identical traces and reports") {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-det-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string bin = HETSIM_BINARY;
  for (const char* name : {"a", "b"}) {
    const auto trace = dir / (std::string(name) + ".trace.json");
    const auto report = dir / (std::string(name) + ".report.json");
    REQUIRE(shell(bin + " run --cluster " + std::string(HETSIM_SOURCE_DIR) +
                  "/topologies/clusters/two-site-wan.json --tp 8 --pp 2 --gbs 16 --seq-length 2048 --json --trace " +
                  trace.string() + " > " + report.string()) == 0);
  }
  CHECK(slurp(dir / "a.trace.json") == slurp(dir / "b.trace.json"));
  auto a = nlohmann::json::parse(slurp(dir / "a.report.json"));
  auto b = nlohmann::json::parse(slurp(dir / "b.report.json"));
  CHECK(a.contains("wall_s"));
  a.erase("wall_s");
  b.erase("wall_s");
  CHECK(a == b);
  for (const char* key : {"iteration_time_s", "tokens_per_s", "mfu", "bubble_fraction",
                          "bubble_fraction_per_rank", "peak_memory_gib", "oom", "cost_usd",
                          "energy_kwh", "events"})
    CHECK_MESSAGE(a.contains(key), key);
  CHECK(shell(bin + " validate " + (dir / "a.trace.json").string() + " > /dev/null") == 0);
  std::filesystem::remove_all(dir);
}

// `hetsim run <args> --trace FILE` in a scratch folder: its stdout, its trace, and whether
// `hetsim validate` accepts the trace.
struct TracedRun {
  std::string report, trace;
  bool valid = false;
};
TracedRun traced_run(const std::string& name, const std::string& args) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string bin = HETSIM_BINARY;
  const auto trace = dir / "trace.json";
  const auto report = dir / "report.txt";
  TracedRun run;
  if (shell(bin + " run " + args + " --trace " + trace.string() + " > " + report.string()) == 0) {
    run.report = slurp(report);
    run.trace = slurp(trace);
    run.valid = shell(bin + " validate " + trace.string() + " > /dev/null") == 0;
  }
  std::filesystem::remove_all(dir);
  return run;
}

TEST_CASE("a ZeRO-3 run's weight gathers get a thread of their own and the trace stays valid") {
  // Overlapped reduce-scatters and weight gathers run at the same time on each GPU.
  const TracedRun run =
      traced_run("zero3", "--tp 8 --pp 2 --gbs 16 --seq-length 2048 --zero-stage 3 --overlap-grad-reduce --json");
  REQUIRE(!run.report.empty());
  const auto r = nlohmann::json::parse(run.report);
  CHECK(r["plan"]["zero_stage"] == 3);
  REQUIRE(r["parameter_gather_s_per_rank"].size() == 2);
  for (const auto& seconds : r["parameter_gather_s_per_rank"]) CHECK(seconds.get<double>() > 0);
  CHECK(run.trace.find("weight gathers (ZeRO-3") != std::string::npos);
  CHECK(run.valid);
}

TEST_CASE("a MoE run's expert-data-parallel collectives get a thread of their own and the trace stays valid") {
  // dp 8, ep 2: dense and expert gradients reduce at the same time after the backward.
  const TracedRun run = traced_run("moe", "--model " + std::string(HETSIM_SOURCE_DIR) +
                                              "/models/configs/mixtral-8x7b.json --tp 2 --pp 2 --ep 2 --gbs 64 "
                                              "--seq-length 4096 --sequence-parallel --use-flash-attn "
                                              "--use-distributed-optimizer");
  REQUIRE(!run.report.empty());
  CHECK(run.trace.find("expert data-parallel collectives") != std::string::npos);
  CHECK(run.valid);
}

// `hetsim run --cp 2` on a shipped cluster: the plan shows cp and the dp it leaves, the JSON has
// plan.cp and the ring's exposed time and bytes, and a run without --cp reports neither.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"

namespace {

using hetsim::test::read_json;
using hetsim::test::shell;
using Report = hetsim::test::RunReport;

// `hetsim run ARGS` on the shipped 4-node DGX H100 cluster, as JSON and as a table.
Report run(const std::string& args) {
  return hetsim::test::run_report(std::string("--cluster ") + HETSIM_SOURCE_DIR +
                                  "/topologies/clusters/dgx-h100-4node.json " + args);
}

}  // namespace

TEST_CASE("--cp 2 on 4 DGX H100 nodes: tp 4 x cp 2 x pp 2 leaves dp 2") {
  const Report two = run("--cp 2 --seq-length 16384 --gbs 16");
  CHECK(two.json["plan"]["cp"] == 2);
  CHECK(two.json["plan"]["dp"] == 2);
  CHECK(two.json["plan"]["microbatches"] == 8);
  CHECK(two.table.find("tp 4 x cp 2 x pp 2 x dp 2, vpp 1, mbs 1, gbs 16, seq 16384, 8 microbatches") !=
        std::string::npos);
  CHECK(two.table.find("cp ring exposed s") != std::string::npos);
  const auto& ring = two.json["context_parallel"];
  CHECK(ring["exposed_s_per_rank"].size() == 2);
  CHECK(ring["bytes_per_iteration"].get<double>() > 0);
  // The ring stays inside each node (tp 4 x cp 2 = 8 GPUs): its bytes are NVLink bytes.
  CHECK(two.json["link_bytes_per_iteration"]["intra_node"].get<double>() >= ring["bytes_per_iteration"].get<double>());
  // Same tokens per iteration as cp 1; a report without --cp names no cp at all.
  const Report one = run("--seq-length 16384 --gbs 16");
  CHECK(!one.json["plan"].contains("cp"));
  CHECK(!one.json.contains("context_parallel"));
  CHECK(one.table.find("cp ring") == std::string::npos);
  CHECK(one.json["tokens_per_s"].get<double>() * one.json["iteration_time_s"].get<double>() ==
        doctest::Approx(two.json["tokens_per_s"].get<double>() * two.json["iteration_time_s"].get<double>()));
  CHECK(two.json["peak_memory_gib"]["max"].get<double>() < one.json["peak_memory_gib"]["max"].get<double>());
}

TEST_CASE("a sweep takes cp as an axis under run's flag name") {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-cp-sweep-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string root = HETSIM_SOURCE_DIR;
  std::ofstream(dir / "spec.json") << R"({"base": {"cluster": ")" << root
                                   << R"(/topologies/clusters/dgx-h100-4node.json", "gbs": 16, "seq-length": 32768,
      "use-flash-attn": true}, "axes": {"cp": [1, 2]}})";
  REQUIRE(shell(std::string(HETSIM_BINARY) + " sweep " + (dir / "spec.json").string() + " --json > " +
                (dir / "summary.json").string() + " 2> /dev/null") == 0);
  const nlohmann::json summary = read_json(dir / "summary.json");
  std::filesystem::remove_all(dir);
  CHECK(summary["points"] == 2);
  CHECK(summary["feasible"] == 2);
}

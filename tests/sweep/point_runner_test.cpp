// Running points on threads: every point once, the same lines whatever the thread count, and a
// point that cannot run recorded with its reason instead of ending the sweep.
#include <doctest/doctest.h>

#include <fstream>
#include <numeric>

#include "tools/sweep/point_runner.hpp"
#include "tools/sweep/sweep_file.hpp"

using namespace hetsim::sweep;
using nlohmann::json;

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;

// Llama-3.2-1B on one DGX A100 (8 GPUs): tp 3 does not divide the GPUs.
SweepSpec small_sweep() {
  json spec{{"base",
             {{"cluster", kRoot + "/topologies/clusters/dgx-a100-1node.json"},
              {"model", kRoot + "/models/configs/llama-3.2-1b.json"},
              {"gbs", 16},
              {"seq-length", 1024}}},
            {"axes", {{"tp", {1, 2, 3, 4}}, {"pp", {1, 2}}}}};
  return parse_sweep_spec(spec, "spec.json");
}

std::vector<json> run_all(const SweepSpec& spec, const hetsim::GpuCatalog& catalog, int jobs) {
  std::vector<std::size_t> indexes(spec.point_count);
  std::iota(indexes.begin(), indexes.end(), std::size_t{0});
  PointRunner runner(spec, catalog, indexes, jobs);
  std::vector<json> lines;
  while (!runner.done())
    for (json& line : runner.take(std::chrono::milliseconds(50))) lines.push_back(std::move(line));
  sort_by_index(lines);
  return lines;
}

}  // namespace

TEST_CASE("one thread and three give the same lines, one per point, invalid points with a reason") {
  const SweepSpec spec = small_sweep();
  const auto catalog = hetsim::GpuCatalog::load(kRoot + "/models/gpus");
  const std::vector<json> one = run_all(spec, catalog, 1);
  const std::vector<json> three = run_all(spec, catalog, 3);
  REQUIRE(one.size() == spec.point_count);
  CHECK(one == three);
  for (std::size_t i = 0; i < one.size(); ++i) {
    CAPTURE(one[i].dump());
    CHECK(one[i]["index"] == i);
    CHECK(one[i]["point"] == spec.point(i));
    const bool tp3 = spec.point(i)["tp"] == 3;
    CHECK(one[i].contains("error") == tp3);
    if (tp3) {
      CHECK(one[i]["error"].get<std::string>().find("tp") != std::string::npos);
    } else {
      CHECK(one[i]["report"]["plan"]["tp"] == spec.point(i)["tp"]);
      CHECK(one[i]["report"]["iteration_time_s"].get<double>() > 0);
      CHECK_FALSE(one[i]["report"].contains("wall_s"));  // the same line in every run
    }
  }
}

TEST_CASE("a cluster variation reaches the simulated cluster; an unknown GPU type is a reason") {
  json spec = json::parse(R"({"base": {"gbs": 16, "seq-length": 1024, "tp": 8, "pp": 1},
      "points": [{"gpu_type": "a100-80gb"}, {"gpu_type": "h100-sxm"}, {"gpu_type": "h100-sxn"}]})");
  spec["base"]["cluster"] = kRoot + "/topologies/clusters/dgx-a100-1node.json";
  spec["base"]["model"] = kRoot + "/models/configs/llama-3.2-1b.json";
  const auto catalog = hetsim::GpuCatalog::load(kRoot + "/models/gpus");
  const std::vector<json> lines = run_all(parse_sweep_spec(spec, "spec.json"), catalog, 2);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["report"]["peak_memory_gib"]["per_gpu"][0]["gpu_type"] == "a100-80gb");
  CHECK(lines[1]["report"]["peak_memory_gib"]["per_gpu"][0]["gpu_type"] == "h100-sxm");
  CHECK(lines[1]["report"]["iteration_time_s"].get<double>() <
        lines[0]["report"]["iteration_time_s"].get<double>());
  CHECK(lines[2]["error"] ==
        "gpu_type: got \"h100-sxn\"; expected a GPU type of the catalog (models/gpus) or of the "
        "cluster's gpu_types; did you mean \"h100-sxm\"?");
}

TEST_CASE("a sweep's gpu_type may name a GPU type the cluster file defines") {
  // Before: the key was checked against the shipped catalog only, so a cluster's own type
  // (gpu_types, topologies/README.md) could be named by its node groups but not swept to.
  json cluster;
  std::ifstream(kRoot + "/topologies/clusters/dgx-a100-1node.json") >> cluster;
  cluster["gpu_types"] = {{"a100-80gb-capped",
                           {{"base", "a100-80gb"},
                            {"hbm_GiB", 40},
                            {"sources", {{"hbm_GiB", "a test's figure"}}}}}};
  const std::string path = "/tmp/hetsim_point_runner_gpu_types.json";
  std::ofstream(path) << cluster.dump(2);
  json spec = json::parse(R"({"base": {"gbs": 16, "seq-length": 1024, "tp": 8, "pp": 1},
      "points": [{"gpu_type": "a100-80gb-capped"}]})");
  spec["base"]["cluster"] = path;
  spec["base"]["model"] = kRoot + "/models/configs/llama-3.2-1b.json";
  const auto catalog = hetsim::GpuCatalog::load(kRoot + "/models/gpus");
  const std::vector<json> lines = run_all(parse_sweep_spec(spec, "spec.json"), catalog, 1);
  REQUIRE(lines.size() == 1);
  CAPTURE(lines[0].dump());
  CHECK(lines[0]["report"]["peak_memory_gib"]["per_gpu"][0]["gpu_type"] == "a100-80gb-capped");
  CHECK(lines[0]["report"]["peak_memory_gib"]["per_gpu"][0]["capacity_gib"] == 40.0);
}

// The closed-form bounds of plan_bounds.hpp are true lower bounds: for every candidate of a small
// space, simulated or not, the bound never exceeds what the simulator reports, so pruning by
// them cannot drop a plan that would have ranked.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <numeric>

#include "models/gpu_catalog.hpp"
#include "plan_test_support.hpp"
#include "tools/plan/plan_bounds.hpp"
#include "tools/sweep/point_runner.hpp"
#include "tools/sweep/sweep_spec.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;
using namespace hetsim::plan;

namespace {

using test::kRoot;

void check_bounds_below_simulation(const std::string& cluster_name, const std::string& model_name,
                                   int gbs, int seq, bool wide) {
  const GpuCatalog& catalog = test::catalog();
  const PlanSpaceOptions options{kRoot + "/" + cluster_name,
                                 kRoot + "/models/configs/" + model_name, gbs, seq, wide};
  const TransformerConfig model = load_transformer_config(options.model_file);
  const std::vector<GpuSubset> subsets =
      gpu_subsets(load_cluster_spec(options.cluster_file, catalog.keys()), catalog);
  const std::vector<PlanCandidate> candidates = enumerate_candidates(model, subsets, options);
  sweep::SweepSpec spec;
  for (const PlanCandidate& c : candidates)
    spec.add_point(c.point(options, subsets[c.subset]));
  std::vector<std::size_t> all(candidates.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  sweep::PointRunner runner(spec, catalog, all, 4);
  std::size_t checked = 0;
  while (!runner.done()) {
    for (const nlohmann::json& line : runner.take(std::chrono::milliseconds(50))) {
      const std::size_t i = line.at("index").get<std::size_t>();
      const PlanCandidate& c = candidates[i];
      CAPTURE(c.text());
      CAPTURE(line.dump().substr(0, 300));
      REQUIRE(line.contains("report"));  // the enumeration only makes plans run accepts
      const nlohmann::json& report = line.at("report");
      const PlanBounds bounds = plan_bounds(model, catalog, subsets[c.subset], c, options);
      const double simulated_s = report.at("iteration_time_s").get<double>();
      const double peak_bytes = report.at("peak_memory_gib").at("max").get<double>() * (1ULL << 30);
      INFO(
          fmt::format("time bound {:.6f} s <= simulated {:.6f} s; memory bound {:.3f} GiB <= "
                      "simulated peak {:.3f} GiB",
                      bounds.time_s, simulated_s, bounds.memory_bytes / (1ULL << 30),
                      peak_bytes / (1ULL << 30)));
      CHECK(bounds.time_s > 0);
      CHECK(bounds.time_s <= simulated_s * (1 + 1e-9));
      CHECK(bounds.memory_bytes <= peak_bytes * (1 + 1e-9));
      CHECK(bounds.usd_per_million_tokens() <=
            report.at("cost_usd").at("per_million_tokens").get<double>() * (1 + 1e-9));
      ++checked;
    }
  }
  CHECK(checked == candidates.size());
}

}  // namespace

TEST_CASE("the bounds lie below the simulation for every candidate on one DGX A100") {
  check_bounds_below_simulation("topologies/clusters/dgx-a100-1node.json", "llama-3.2-1b.json", 8,
                                512, false);
}

TEST_CASE("the bounds lie below the simulation for a MoE model's expert-parallel candidates") {
  // 16 sequences: DualPipe (m >= 2p) has candidates too.
  check_bounds_below_simulation("topologies/clusters/dgx-a100-1node.json", "mixtral-8x7b.json", 16, 256, false);
}

TEST_CASE("the bounds lie below the simulation in the wide space") {
  check_bounds_below_simulation("topologies/clusters/dgx-a100-1node.json", "llama-3.2-1b.json", 8,
                                256, true);
}

TEST_CASE("the bounds lie below the simulation on every GPU subset of a mixed cluster") {
  check_bounds_below_simulation("tests/data/clusters/mixed-a100-h100-small.json",
                                "llama-3.2-1b.json", 8, 256, false);
}

TEST_CASE("the bounds lie below the simulation with context parallelism") {
  // 16k tokens: cp 1, 2 and 4 on one DGX A100, the ring's transfers and the s/cp activations in
  // the simulation against a free ring in the bound.
  check_bounds_below_simulation("topologies/clusters/dgx-a100-1node.json", "llama-3.2-1b.json", 4,
                                kContextParallelMinSeqLength, false);
}

// Ring phases of a collective plan are not stored transfer by transfer: their transfers start as
// the steps reach them. Held here against the same phases built as stored transfers (same ids,
// same dependencies), which must replay to the same events, times and link bytes, bit for bit;
// and the 4,096-GPU flat ring, 268 million transfers, planned without storing one.
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "base/error.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/collectives/flow_collective.hpp"
#include "collective_test_support.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {

using test::dgx_h100_4node;
using test::first_gpus;

// The plan's ring phases written out as stored transfers, in id order, by RingPhase's rule.
CollectivePlan stored(const CollectivePlan& plan) {
  CollectivePlan out{plan.transfers, {}};
  for (const RingPhase& phase : plan.ring_phases) {
    const std::size_t n = phase.rings.front().size();
    for (std::size_t r = 0; r < phase.rings.size(); ++r) {
      for (int k = 0; k < phase.steps; ++k) {
        for (std::size_t i = 0; i < n; ++i) {
          const auto id = [&](int step, std::size_t position) {
            return phase.first_id +
                   (r * static_cast<std::uint64_t>(phase.steps) +
                    static_cast<std::uint64_t>(step)) *
                       n +
                   position;
          };
          std::vector<TransferDependency> after =
              k == 0 ? phase.first_after[r][i]
                     : std::vector<TransferDependency>{{id(k - 1, (i + n - 1) % n), false},
                                                       {id(k - 1, i), true}};
          REQUIRE(out.transfers.size() == id(k, i));
          out.transfers.push_back(
              {phase.rings[r][i], phase.rings[r][(i + 1) % n], phase.bytes, std::move(after)});
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("ring phases replay exactly as the same transfers stored one by one") {
  const Cluster& c = dgx_h100_4node();
  const double kGiB = 1024.0 * 1024 * 1024;
  struct Case {
    CollectiveOp op;
    CollectiveAlgo algo;
    int gpus;
  };
  // Flat rings on 8 channels; hierarchical: three phases, each waiting on the one before.
  for (const Case& k : {Case{CollectiveOp::kAllReduce, CollectiveAlgo::kRing, 32},
                        Case{CollectiveOp::kAllGather, CollectiveAlgo::kRing, 12},
                        Case{CollectiveOp::kAllReduce, CollectiveAlgo::kHierarchical, 32},
                        Case{CollectiveOp::kReduceScatter, CollectiveAlgo::kHierarchical, 16}}) {
    const std::string op = to_string(k.op);
    const std::string algo = to_string(k.algo);
    CAPTURE(op);
    CAPTURE(algo);
    const CollectivePlan plan = plan_collective(c, k.op, k.algo, first_gpus(k.gpus), kGiB);
    CHECK(plan.transfers.empty());
    REQUIRE(!plan.ring_phases.empty());
    const CollectivePlan whole = stored(plan);
    CHECK(whole.transfers.size() == plan.transfer_count());
    const CollectiveTiming streamed = simulate_collective_flows(c, plan);
    const CollectiveTiming reference = simulate_collective_flows(c, whole);
    MESSAGE("  ", plan.transfer_count(), " transfers, ", streamed.events,
            " events: ", streamed.time_s, " s streamed, ", reference.time_s, " s stored");
    CHECK(streamed.time_s == reference.time_s);
    CHECK(streamed.events == reference.events);
    CHECK(streamed.transfers == reference.transfers);
    CHECK(streamed.link_bytes == reference.link_bytes);
  }
}

TEST_CASE("a 4,096-GPU flat ring is planned without storing its 268 million transfers") {
  const Cluster big = load_cluster(
      std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/dgx-h100-2048node.json", {"h100-sxm"});
  const CollectivePlan plan = plan_collective(big, CollectiveOp::kAllReduce, CollectiveAlgo::kRing,
                                              first_gpus(4096), 1024.0 * 1024 * 1024);
  CHECK(plan.transfers.empty());
  REQUIRE(plan.ring_phases.size() == 1);
  CHECK(plan.ring_phases[0].rings.size() == 8);  // one channel per NIC of a DGX H100
  CHECK(plan.ring_phases[0].steps == 2 * 4095);
  // 8 channels x 4,096 GPUs x 8,190 steps.
  CHECK(plan.transfer_count() == 268369920u);
  CHECK(static_cast<double>(plan.transfer_count()) <= kMaxRingTransfers);
}

TEST_CASE("a malformed ring phase is refused before it runs") {
  const Cluster& c = dgx_h100_4node();
  CollectivePlan plan = plan_collective(c, CollectiveOp::kAllReduce, CollectiveAlgo::kHierarchical,
                                        first_gpus(16), 1e6);
  // Two nodes of 8: 2 rings x 8 GPUs x 7 steps inside the nodes (ids 0-111), then 8 rings of 2.
  REQUIRE(plan.ring_phases.size() == 3);
  REQUIRE(plan.ring_phases[1].first_id == 112);
  SUBCASE("ids that do not follow on") {
    plan.ring_phases[1].first_id += 1;
    CHECK_THROWS_WITH_AS(simulate_collective_flows(c, plan),
                         "collective plan: ring phase 1 is malformed (first id 113, expected 112)",
                         SimulationError);
  }
  SUBCASE("a first step waiting for its own phase") {
    plan.ring_phases[1].first_after[0][0].push_back({plan.ring_phases[1].first_id, false});
    CHECK_THROWS_WITH_AS(
        simulate_collective_flows(c, plan),
        "collective plan: ring phase 1 waits for transfer 112, not of an earlier phase",
        SimulationError);
  }
  SUBCASE("rings of different sizes") {
    plan.ring_phases[0].rings[1].pop_back();
    CHECK_THROWS_WITH_AS(simulate_collective_flows(c, plan),
                         "collective plan: ring 1 of phase 0 has 7 GPUs; expected 8",
                         SimulationError);
  }
}

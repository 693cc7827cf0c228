// A ring all-reduce whose every hop leaves its group of a switch tier (topologies/README.md
// "Switch tiers"), at oversubscription 1, 2 and 7, on the flow network and on the alpha-beta path.
//
// Four one-GPU nodes, 400 Gbit/s NIC (B = 50 GB/s), one tier of groups of two nodes: {0,1} and
// {2,3}. The ring 0 -> 2 -> 1 -> 3 -> 0 crosses the tier on every hop, so each group's uplink
// (and downlink) carries two of the ring's flows at once. Its capacity is the group's injection
// bandwidth over the ratio r, 2B / r, so each flow gets min(B, B / r) = B / r for r >= 1: a
// uniform ring of bandwidth B / r whose hop latency is the NIC's plus the tier's, L = 24 + 2 us.
// The ring all-reduce closed form (DESIGN.md) then gives
//   t(r) = 2(n-1)/n * S * r / B + 2(n-1) * L,
// the bandwidth term growing linearly with r and the latency term not at all.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "sim/collectives/alpha_beta.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/collectives/flow_collective.hpp"
#include "topologies/cluster_spec.hpp"

using namespace hetsim;

namespace {

constexpr double kNic = 50e9, kNicLatency = 24e-6, kTierLatency = 2e-6;
constexpr double kGiB = 1024.0 * 1024 * 1024;

Cluster four_nodes_two_groups(double oversubscription) {
  ClusterSpec spec;
  spec.name = "tiered-ring";
  SiteSpec site;
  site.name = "dc";
  site.tiers.push_back(FabricTierSpec{2, false, oversubscription, kTierLatency});
  site.node_groups.push_back(
      NodeGroupSpec{"n", 4, "h100-sxm", 1, {450e9, 8e-6}, {kNic, kNicLatency}, ""});
  spec.sites.push_back(site);
  return build_cluster(spec);
}

}  // namespace

TEST_CASE("ring all-reduce across an oversubscribed tier: t(r) = 2(n-1)/n S r/B + 2(n-1) L") {
  const std::vector<GpuId> ring = {0, 2, 1, 3};
  const double n = 4, s = kGiB, latency = kNicLatency + kTierLatency;
  for (const double r : {1.0, 2.0, 7.0}) {
    const Cluster c = four_nodes_two_groups(r);
    const double expected = 2 * (n - 1) / n * s * r / kNic + 2 * (n - 1) * latency;
    const double flows =
        simulate_collective_flows(
            c, plan_collective(c, CollectiveOp::kAllReduce, CollectiveAlgo::kRing, ring, s))
            .time_s;
    const double alpha_beta =
        alpha_beta_collective_s(c, CollectiveOp::kAllReduce, CollectiveAlgo::kRing, ring, s);
    std::printf(
        "  1 GiB ring all-reduce, oversubscription %.0f: expected %.6f ms, flows %.6f ms, "
        "alpha-beta %.6f ms\n",
        r, expected * 1e3, flows * 1e3, alpha_beta * 1e3);
    CHECK(std::abs(flows - expected) / expected < 1e-9);
    CHECK(std::abs(alpha_beta - expected) / expected < 1e-9);
  }
}

TEST_CASE("a ring that stays inside its groups does not see the tier") {
  // 0 -> 1 -> 2 -> 3 -> 0 crosses the tier on two hops only, one flow per uplink: at r = 2 the
  // uplink's 2B / 2 = B still carries it at the NIC's rate; at r = 7 the crossing hops get 2B / 7.
  const double n = 4, s = kGiB;
  const Cluster blocking2 = four_nodes_two_groups(2);
  const Cluster blocking1 = four_nodes_two_groups(1);
  const std::vector<GpuId> ring = {0, 1, 2, 3};
  const auto time = [&](const Cluster& c) {
    return simulate_collective_flows(
               c, plan_collective(c, CollectiveOp::kAllReduce, CollectiveAlgo::kRing, ring, s))
        .time_s;
  };
  CHECK(time(blocking2) == doctest::Approx(time(blocking1)).epsilon(1e-12));
  const double at7 = time(four_nodes_two_groups(7));
  const double bandwidth_bound =
      2 * (n - 1) / n * s / (2 * kNic / 7);  // the slowest hop sets the pace
  std::printf("  ring inside groups at oversubscription 7: %.6f ms, at least %.6f ms\n", at7 * 1e3,
              bandwidth_bound * 1e3);
  CHECK(at7 > bandwidth_bound);
}

// A message between two machines of a pair-link matrix (topologies/README.md "Pair links") on the
// flow network: one link, so S bytes take latency + S / bandwidth of the matrix entry, exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/collectives/collective_plan.hpp"
#include "sim/collectives/flow_collective.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

TEST_CASE("64 MiB between two machines takes the matrix's latency + size / bandwidth") {
  const Cluster c = load_cluster(
      std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/pair-matrix-3machine.json",
      {"v100-16gb"});
  const double bytes = 64.0 * 1024 * 1024;
  struct Case {
    GpuId from, to;
    double gbps, latency_ms;
    const char* what;
  };
  // Yuan et al. 2022's measured AWS figures, as the shipped file gives them (GPUs 0-7 Virginia,
  // 8-15 Ohio, 16-23 Oregon).
  const Case cases[] = {{0, 16, 0.79, 67, "Virginia -> Oregon, 0.79 Gbit/s, 67 ms"},
                        {23, 8, 1.10, 49, "Oregon -> Ohio, 1.10 Gbit/s, 49 ms"},
                        {9, 2, 1.12, 11, "Ohio -> Virginia, 1.12 Gbit/s, 11 ms"}};
  for (const Case& k : cases) {
    const double expected = k.latency_ms * 1e-3 + bytes / (k.gbps * 1e9 / 8);
    const double actual =
        simulate_collective_flows(c, plan_collective(c, CollectiveOp::kSend, CollectiveAlgo::kRing,
                                                     {k.from, k.to}, bytes))
            .time_s;
    std::printf("  64 MiB %-40s expected %.9f s, actual %.9f s\n", k.what, expected, actual);
    CHECK(std::abs(actual - expected) / expected < 1e-12);
  }
}

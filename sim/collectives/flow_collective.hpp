#pragma once
// Runs a CollectivePlan on the flow network (max-min fair sharing, real routes): every transfer
// is a flow that starts once its dependencies are met. The time is when the last byte of the
// last transfer arrives.
#include <cstdint>
#include <vector>

#include "sim/collectives/collective_plan.hpp"
#include "sim/network.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct CollectiveTiming {
  double time_s = 0;
  std::size_t transfers = 0;
  std::uint64_t events = 0;
  std::vector<double> link_bytes;  // by LinkId
};

// Throws SimulationError when transfers remain undelivered (a dependency cycle in the plan).
CollectiveTiming simulate_collective_flows(const Cluster& cluster, const CollectivePlan& plan,
                                           NetworkOptions options = {});

}  // namespace hetsim

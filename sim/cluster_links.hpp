#pragma once
// The cluster's links as the flow network carries them: bandwidth, latency and, for WAN links
// with a trace or a random walk, the bandwidth steps over time.
#include <vector>

#include "sim/network.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// Every link of the cluster as the network is built with it, by LinkId. A WAN link's bandwidth
// steps view the cluster's trace: the result is only good while the cluster lives.
std::vector<LinkCapacity> network_links(const Cluster& cluster);

}  // namespace hetsim

#include "sim/cluster_links.hpp"

namespace hetsim {

std::vector<LinkCapacity> network_links(const Cluster& cluster) {
  std::vector<LinkCapacity> links;
  links.reserve(cluster.links().size());
  for (const Link& link : cluster.links()) {
    std::vector<BandwidthStep> steps;
    steps.reserve(link.bandwidth_trace.size());
    for (const BandwidthPoint& point : link.bandwidth_trace) steps.push_back({point.time_s, point.bytes_per_s});
    links.emplace_back(link.bandwidth_bytes_per_s, link.latency_s, std::move(steps));
  }
  return links;
}

}  // namespace hetsim

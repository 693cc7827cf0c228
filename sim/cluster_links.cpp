#include "sim/cluster_links.hpp"

namespace hetsim {

std::vector<LinkCapacity> network_links(const Cluster& cluster) {
  std::vector<LinkCapacity> links;
  links.reserve(cluster.links().size());
  for (LinkId id = 0; id < static_cast<LinkId>(cluster.links().size()); ++id) {
    const Link& link = cluster.links()[id];
    const std::span<const BandwidthPoint> trace = cluster.bandwidth_trace(id);
    std::vector<BandwidthStep> steps;
    steps.reserve(trace.size());
    for (const BandwidthPoint& point : trace) steps.push_back({point.time_s, point.bytes_per_s});
    links.emplace_back(link.bandwidth_bytes_per_s, link.latency_s, std::move(steps));
  }
  return links;
}

}  // namespace hetsim

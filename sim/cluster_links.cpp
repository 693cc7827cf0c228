#include "sim/cluster_links.hpp"

namespace hetsim {

std::vector<LinkCapacity> network_links(const Cluster& cluster) {
  std::vector<LinkCapacity> links;
  links.reserve(cluster.links().size());
  for (LinkId id = 0; id < static_cast<LinkId>(cluster.links().size()); ++id) {
    const Link& link = cluster.links()[id];
    links.push_back({link.bandwidth_bytes_per_s, link.latency_s, cluster.bandwidth_trace(id)});
  }
  return links;
}

}  // namespace hetsim

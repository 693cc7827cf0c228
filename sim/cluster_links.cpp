#include "sim/cluster_links.hpp"

namespace hetsim {

std::vector<LinkCapacity> network_links(const Cluster& cluster) {
  std::vector<LinkCapacity> links;
  links.reserve(cluster.links().size());
  for (LinkId id = 0; id < static_cast<LinkId>(cluster.links().size()); ++id) {
    const Link& link = cluster.links()[id];
    // A WAN or pair link's latency is the measured one-way delay of the path, paid again by
    // every acknowledgement coming back; the other classes' latencies are software floors.
    const double round_trip_s = link.link_class == LinkClass::kWan ? 2 * link.latency_s : 0.0;
    links.push_back(
        {link.bandwidth_bytes_per_s, link.latency_s, cluster.bandwidth_trace(id), round_trip_s});
  }
  return links;
}

}  // namespace hetsim

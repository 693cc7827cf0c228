// Routes between sites by the time one message takes on them: a chain of WAN links with one-way
// latencies L_i and bandwidths B_i carries S bytes in sum(L_i) + S / min(B_i) (the flow model's
// time on an idle route), S the cluster's representative message (wan_route_message_bytes).
// That cost is not a sum over links, so one Dijkstra cannot minimise it; but for the optimal
// chain, of bottleneck B*, the least-latency chain among links of bandwidth >= B* is at least as
// good. So: for each distinct WAN bandwidth B, Dijkstra on latency over the WAN links of
// bandwidth >= B, cost = latency + S / B; the least cost over all B is the optimum (exact, not a
// heuristic). GPUs and node switches are filtered out, so they are never transit points.
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "topologies/cluster_impl.hpp"

namespace hetsim {

namespace {

// WAN edges of at least `min_bandwidth` bytes/s.
struct IsWanEdge {
  const Cluster::Impl* impl = nullptr;
  double min_bandwidth = 0;
  bool operator()(const FabricGraph::edge_descriptor& e) const {
    const Link& link = impl->links[impl->graph[e].link];
    return link.link_class == LinkClass::kWan && link.bandwidth_bytes_per_s >= min_bandwidth;
  }
};

struct IsSiteSwitch {
  int first_site_vertex = 0;
  bool operator()(const FabricGraph::vertex_descriptor& v) const {
    return static_cast<int>(v) >= first_site_vertex;
  }
};

// Remembers, for each vertex, the link whose relaxation last improved its distance.
struct RecordReachingLink : boost::default_dijkstra_visitor {
  std::vector<LinkId>* reached_by = nullptr;
  template <class Edge, class Graph>
  void edge_relaxed(const Edge& e, const Graph& g) const {
    (*reached_by)[boost::target(e, g)] = g[e].link;
  }
};

}  // namespace

namespace {

// Least-latency chains from `source_site` over the WAN links of bandwidth >= min_bandwidth:
// [site] -> (latency, links), or nullopt where none reaches.
std::vector<std::optional<std::pair<double, std::vector<LinkId>>>> least_latency_chains(
    const Cluster::Impl& impl, int source_site, double min_bandwidth) {
  const boost::filtered_graph<FabricGraph, IsWanEdge, IsSiteSwitch> wan(
      impl.graph, IsWanEdge{&impl, min_bandwidth}, IsSiteSwitch{impl.site_switch_vertex(0)});
  const std::size_t vertex_count = boost::num_vertices(impl.graph);
  std::vector<double> distance(vertex_count, std::numeric_limits<double>::infinity());
  std::vector<FabricGraph::vertex_descriptor> predecessor(vertex_count);
  // The link each vertex was reached by, so that parallel WAN links between the same two sites
  // resolve to the one Dijkstra chose rather than to whichever edge a lookup meets first.
  std::vector<LinkId> reached_by(vertex_count, -1);

  RecordReachingLink visitor;
  visitor.reached_by = &reached_by;

  const auto source = static_cast<FabricGraph::vertex_descriptor>(impl.site_switch_vertex(source_site));
  boost::dijkstra_shortest_paths(
      wan, source,
      boost::weight_map(boost::get(&FabricEdge::latency_s, impl.graph))
          .distance_map(boost::make_iterator_property_map(distance.begin(),
                                                          boost::get(boost::vertex_index, impl.graph)))
          .predecessor_map(boost::make_iterator_property_map(
              predecessor.begin(), boost::get(boost::vertex_index, impl.graph)))
          .visitor(visitor));

  std::vector<std::optional<std::pair<double, std::vector<LinkId>>>> chains(impl.sites.size());
  for (std::size_t site = 0; site < impl.sites.size(); ++site) {
    const auto target = static_cast<FabricGraph::vertex_descriptor>(
        impl.site_switch_vertex(static_cast<int>(site)));
    // Dijkstra leaves an unreached vertex as its own predecessor (and its distance at the
    // infinity it was given), so that is the test for "no WAN path".
    if (target != source && predecessor[target] == target) continue;
    std::vector<LinkId> path;
    for (auto v = target; v != source; v = predecessor[v]) path.push_back(reached_by[v]);
    chains[site] = std::pair{distance[target], std::vector<LinkId>(path.rbegin(), path.rend())};
  }
  return chains;
}

}  // namespace

std::vector<std::optional<std::vector<LinkId>>> least_cost_wan_paths(const Cluster::Impl& impl,
                                                                     int source_site) {
  // Distinct WAN bandwidths, widest first: on equal cost the wider chain (found first) stays.
  std::vector<double> bandwidths;
  for (const Link& link : impl.links)
    if (link.link_class == LinkClass::kWan) bandwidths.push_back(link.bandwidth_bytes_per_s);
  std::sort(bandwidths.begin(), bandwidths.end(), std::greater<>());
  bandwidths.erase(std::unique(bandwidths.begin(), bandwidths.end()), bandwidths.end());

  std::vector<std::optional<std::vector<LinkId>>> paths(impl.sites.size());
  std::vector<double> best(impl.sites.size(), std::numeric_limits<double>::infinity());
  paths[source_site] = std::vector<LinkId>{};
  for (const double bandwidth : bandwidths) {
    auto chains = least_latency_chains(impl, source_site, bandwidth);
    for (std::size_t site = 0; site < chains.size(); ++site) {
      if (!chains[site] || static_cast<int>(site) == source_site) continue;
      const double cost = chains[site]->first + impl.wan_route_message_bytes / bandwidth;
      if (cost < best[site]) {
        best[site] = cost;
        paths[site] = std::move(chains[site]->second);
      }
    }
  }
  return paths;
}

}  // namespace hetsim

// Least-latency routes between sites: Dijkstra over the WAN edges of the fabric graph. GPUs and
// node switches are filtered out, so they are never transit points.
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <limits>

#include "topologies/cluster_impl.hpp"

namespace hetsim {

namespace {

struct IsWanEdge {
  const Cluster::Impl* impl = nullptr;
  bool operator()(const FabricGraph::edge_descriptor& e) const {
    return impl->links[impl->graph[e].link].link_class == LinkClass::kWan;
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

std::vector<std::optional<std::vector<LinkId>>> least_latency_wan_paths(const Cluster::Impl& impl,
                                                                        int source_site) {
  const boost::filtered_graph<FabricGraph, IsWanEdge, IsSiteSwitch> wan(
      impl.graph, IsWanEdge{&impl}, IsSiteSwitch{impl.site_switch_vertex(0)});
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

  std::vector<std::optional<std::vector<LinkId>>> paths(impl.sites.size());
  for (std::size_t site = 0; site < impl.sites.size(); ++site) {
    const auto target = static_cast<FabricGraph::vertex_descriptor>(
        impl.site_switch_vertex(static_cast<int>(site)));
    // Dijkstra leaves an unreached vertex as its own predecessor (and its distance at the
    // infinity it was given), so that is the test for "no WAN path".
    if (target != source && predecessor[target] == target) continue;
    std::vector<LinkId> path;
    for (auto v = target; v != source; v = predecessor[v]) path.push_back(reached_by[v]);
    paths[site] = std::vector<LinkId>(path.rbegin(), path.rend());
  }
  return paths;
}

}  // namespace hetsim

#pragma once
// The inside of a Cluster: flat vectors indexed by ids, the Boost.Graph graph of the fabric and
// the route caches. Included by the topologies sources and by tests that check routes against
// the graph; other folders use cluster.hpp only.
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "topologies/block_arena.hpp"
#include "topologies/cluster.hpp"
#include "topologies/route_table.hpp"

namespace hetsim {

struct FabricEdge {
  LinkId link = -1;
  double latency_s = 0;  // copy of the link's latency: the Dijkstra weight
};

// Vertices: GPUs first (vertex = GpuId), then one switch per node, then one switch per site.
// Edges: one per directed link, carrying its LinkId; a vertex's out-edges in the order their
// links were added. Compressed sparse rows keep the edges and their properties in two arrays,
// built once when every link exists: an adjacency_list holds each edge's property in a heap
// block of its own, 262,144 of them at 65,536 GPUs, all walked again to free the cluster.
using FabricGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, FabricEdge>;

struct NodeInfo {
  std::string name;   // "site/group<k>", k the node's index inside its group
  int site = 0;
  int first_gpu = 0;  // the node's GPUs are first_gpu .. first_gpu + gpu_count - 1
  int gpu_count = 0;
  double intra_node_bandwidth_bytes_per_s = 0;
  double intra_node_latency_s = 0;
  LinkId uplink = -1;    // node -> site fabric, only in oversubscribed sites
  LinkId downlink = -1;  // site fabric -> node
};

// The links a GPU attaches with; -1 where absent (no intra-node links in a one-GPU node).
struct GpuAttachment {
  LinkId to_node_switch = -1;
  LinkId from_node_switch = -1;
  LinkId nic_up = -1;    // GPU -> site switch
  LinkId nic_down = -1;  // site switch -> GPU
};

// The links of one switch tier of a site (FabricTierSpec): per group of `nodes_per_group`
// consecutive nodes of the site, one uplink and one downlink, or one per rail when
// rail-optimised; indexed by group * rails + rail, -1 for a rail no node of the group has.
struct FabricTierLinks {
  int nodes_per_group = 1;
  bool rail_optimized = false;
  int rails = 1;
  std::vector<LinkId> uplinks;
  std::vector<LinkId> downlinks;
};

struct SiteFabric {
  int first_node = 0;  // global index of the site's first node
  std::vector<FabricTierLinks> tiers;  // leaves first; empty: one switch
};

// Key of an ordered pair of ids (GPUs, nodes) in the route and pair-link maps: from << 32 | to.
inline std::uint64_t ordered_pair_key(int from, int to) {
  return (static_cast<std::uint64_t>(from) << 32) | static_cast<std::uint32_t>(to);
}

struct Cluster::Impl {
  std::string name;
  std::string description;
  std::string source_file;
  std::vector<Site> sites;
  std::vector<GpuPlace> gpus;
  std::vector<GpuAttachment> attachments;  // by GpuId
  std::vector<NodeInfo> nodes;
  std::vector<Link> links;
  // The time-varying links' bandwidth points, by LinkId: only WAN links have any. Kept off Link
  // so that a Link holds no heap block: at 65,536 GPUs freeing the cluster walked every one of
  // its 17 MiB of links to find none (BENCHMARKS.md, 2026-12-06, late).
  std::map<LinkId, std::vector<BandwidthPoint>> bandwidth_traces;
  BlockArena<char, 1 << 16> link_names;  // what each Link::name views
  std::vector<int> link_from_vertex;  // by LinkId, vertex ids of FabricGraph
  std::vector<int> link_to_vertex;
  FabricGraph graph;
  std::vector<SiteFabric> site_fabrics;  // by site
  // Measured machine-to-machine links (ClusterSpec::pair_links) by ordered_pair_key(from node, to node).
  std::unordered_map<std::uint64_t, LinkId> pair_links;

  int node_switch_vertex(int node) const { return static_cast<int>(gpus.size()) + node; }
  int site_switch_vertex(int site) const {
    return static_cast<int>(gpus.size() + nodes.size()) + site;
  }

  // The message size WAN routes are chosen for (ClusterSpec::wan_route_message_bytes).
  double wan_route_message_bytes = 0;
  // Least-cost WAN paths between site switches, [from_site][to_site], filled for one source
  // site at a time by the first route that needs it.
  mutable std::vector<std::optional<std::vector<std::vector<LinkId>>>> wan_paths;
  // GPU-level routes by ordered_pair_key(from, to). Their links lie end to end in blocks that
  // never move (a route never straddles two), so the spans route() hands out stay valid as the
  // cache grows, and a route costs no heap block of its own: at 64k GPUs the replay asks for
  // hundreds of thousands.
  mutable RouteTable routes;
  mutable BlockArena<LinkId, 1 << 14> route_links;
  // What compose_route writes a new route into before it is stored: one buffer reused, where a
  // vector per route cost 442,368 heap blocks at 64k GPUs (BENCHMARKS.md, 2026-12-06, late).
  mutable std::vector<LinkId> route_scratch;

  const std::vector<LinkId>& wan_path(int from_site, int to_site) const;
  // The links from GPU `from` to GPU `to`, written over `route`.
  void compose_route(GpuId from, GpuId to, std::vector<LinkId>& route) const;
  // How many switch tiers of their (common) site a route from GPU a to GPU b climbs, and the
  // tier link a GPU leaves (up) or enters (down) its group of `tier` by.
  int tiers_between(const GpuPlace& a, const GpuPlace& b) const;
  LinkId tier_link(int tier, const GpuPlace& gpu, bool up) const;
};

// The WAN chains from `source_site` to every site that carry one message of
// Impl::wan_route_message_bytes soonest (sum of latencies + bytes / bottleneck bandwidth; the
// widest chain on a tie). An unreachable site gets std::nullopt. wan_paths.cpp says how.
std::vector<std::optional<std::vector<LinkId>>> least_cost_wan_paths(const Cluster::Impl& impl,
                                                                     int source_site);

}  // namespace hetsim

#pragma once
// The cluster as the simulator sees it: GPUs with their place (site, node, index in node, type),
// directed links (one per direction of each physical link, bandwidth per direction) and the route
// between any two GPUs as an ordered list of link ids. Built from a cluster JSON by
// load_cluster() (cluster_loader.hpp); routes come from a Boost.Graph graph of the fabric.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/bandwidth_point.hpp"

namespace hetsim {

using GpuId = int;
using LinkId = int;

// kFabric: a node's uplink into an oversubscribed site fabric (absent when non-blocking).
enum class LinkClass { kIntraNode, kNic, kWan, kFabric };
const char* to_string(LinkClass c);

struct Link {
  // e.g. "site-a/node3/gpu5->nvswitch", "site-a->site-b"; stored by the Cluster, valid while
  // it lives.
  std::string_view name;
  LinkClass link_class;
  double bandwidth_bytes_per_s;   // per direction
  double latency_s;               // added once per hop
  double egress_usd_per_byte;     // 0 except on WAN links
};

struct GpuPlace {
  int site;           // index into Cluster::sites()
  int node;           // global node index, 0-based across the cluster
  int local_index;    // index of the GPU inside its node
  std::string gpu_type;  // key into the GPU catalog, e.g. "h100-sxm"
  std::string profile;   // calibration profile measured on this GPU type (path), empty: none
};

struct Site {
  std::string name;
};

class Cluster {
 public:
  Cluster();
  ~Cluster();
  Cluster(Cluster&&) noexcept;
  Cluster& operator=(Cluster&&) noexcept;

  const std::string& name() const;
  const std::string& source_file() const;
  int gpu_count() const;
  int node_count() const;
  const GpuPlace& gpu(GpuId id) const;
  const std::vector<Site>& sites() const;
  const std::vector<Link>& links() const;
  // A link's time-varying bandwidth (a WAN link with a trace or a random walk): sorted by time;
  // before the first point the link carries its bandwidth_bytes_per_s. Empty for a constant link.
  std::span<const BandwidthPoint> bandwidth_trace(LinkId id) const;
  const std::string& description() const;

  // Nodes by global index (file order). A node's GPUs are consecutive ids starting at
  // first_gpu_of_node(node); its name is "site/group<k>", e.g. "dc-a/dgx3".
  const std::string& node_name(int node) const;
  GpuId first_gpu_of_node(int node) const;
  int gpus_in_node(int node) const;
  // Whether some machines are joined by measured pair links (ClusterSpec::pair_links).
  bool has_pair_links() const;

  // Ordered links from GPU `from` to GPU `to` (empty when from == to). Computed once per pair of
  // endpoints' attachment points and cached; O(hops) after the first call.
  // The span stays valid as long as the cluster.
  std::span<const LinkId> route(GpuId from, GpuId to) const;

  // Bandwidth and latency of the intra-node fabric of the node holding `gpu`, per GPU per
  // direction: what tensor-parallel collectives inside a stage are costed on.
  double intra_node_bandwidth_bytes_per_s(GpuId gpu) const;
  double intra_node_latency_s(GpuId gpu) const;

  // Figures of route(from, to), for alpha-beta costing: the sum of its links' latencies (s), the
  // smallest bandwidth along it (bytes/s; +infinity when from == to) and the sum of the egress
  // prices of its links (USD per byte).
  double route_latency_s(GpuId from, GpuId to) const;
  double route_bottleneck_bandwidth_bytes_per_s(GpuId from, GpuId to) const;
  double route_egress_usd_per_byte(GpuId from, GpuId to) const;

  struct Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetsim

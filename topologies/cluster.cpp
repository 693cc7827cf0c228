// Cluster accessors and routing. A GPU-level route is composed from the GPUs' attachment links
// and, across sites, the cached least-latency WAN path between their site switches; composed
// routes are cached by (from, to), so a repeated route() is one hash lookup.
#include "topologies/cluster.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/error.hpp"
#include "topologies/cluster_impl.hpp"

namespace hetsim {

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::kIntraNode: return "intra_node";
    case LinkClass::kNic: return "nic";
    case LinkClass::kWan: return "wan";
    case LinkClass::kFabric: return "fabric";
  }
  return "unknown";
}

Cluster::Cluster() : impl_(std::make_unique<Impl>()) {}
Cluster::~Cluster() = default;
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;

const std::string& Cluster::name() const { return impl_->name; }
const std::string& Cluster::source_file() const { return impl_->source_file; }
const std::string& Cluster::description() const { return impl_->description; }
int Cluster::gpu_count() const { return static_cast<int>(impl_->gpus.size()); }
int Cluster::node_count() const { return static_cast<int>(impl_->nodes.size()); }
const std::vector<Site>& Cluster::sites() const { return impl_->sites; }
const std::vector<Link>& Cluster::links() const { return impl_->links; }

std::span<const BandwidthPoint> Cluster::bandwidth_trace(LinkId id) const {
  const auto trace = impl_->bandwidth_traces.find(id);
  if (trace == impl_->bandwidth_traces.end()) return {};
  return trace->second;
}

namespace {
void check_gpu(const Cluster::Impl& impl, GpuId id) {
  if (id < 0 || id >= static_cast<GpuId>(impl.gpus.size()))
    throw Error(fmt::format("cluster \"{}\": GPU id {} out of range 0..{}", impl.name, id,
                            static_cast<int>(impl.gpus.size()) - 1));
}
void check_node(const Cluster::Impl& impl, int node) {
  if (node < 0 || node >= static_cast<int>(impl.nodes.size()))
    throw Error(fmt::format("cluster \"{}\": node index {} out of range 0..{}", impl.name, node,
                            static_cast<int>(impl.nodes.size()) - 1));
}
}  // namespace

const GpuPlace& Cluster::gpu(GpuId id) const {
  check_gpu(*impl_, id);
  return impl_->gpus[id];
}

bool Cluster::has_pair_links() const { return !impl_->pair_links.empty(); }

const std::string& Cluster::node_name(int node) const {
  check_node(*impl_, node);
  return impl_->nodes[node].name;
}

GpuId Cluster::first_gpu_of_node(int node) const {
  check_node(*impl_, node);
  return impl_->nodes[node].first_gpu;
}

int Cluster::gpus_in_node(int node) const {
  check_node(*impl_, node);
  return impl_->nodes[node].gpu_count;
}

double Cluster::intra_node_bandwidth_bytes_per_s(GpuId gpu) const {
  return impl_->nodes[this->gpu(gpu).node].intra_node_bandwidth_bytes_per_s;
}

double Cluster::intra_node_latency_s(GpuId gpu) const {
  return impl_->nodes[this->gpu(gpu).node].intra_node_latency_s;
}

const std::vector<LinkId>& Cluster::Impl::wan_path(int from_site, int to_site) const {
  auto& from_here = wan_paths[from_site];
  if (!from_here) {
    auto found = least_cost_wan_paths(*this, from_site);
    std::vector<std::vector<LinkId>> paths(found.size());
    for (std::size_t s = 0; s < found.size(); ++s) {
      // build_cluster() refused clusters with unjoined sites, so this is a broken invariant.
      if (!found[s])
        throw Error(fmt::format("cluster \"{}\": no WAN path from site \"{}\" to \"{}\"", name,
                                sites[from_site].name, sites[s].name));
      paths[s] = std::move(*found[s]);
    }
    from_here = std::move(paths);
  }
  return (*from_here)[to_site];
}

int Cluster::Impl::tiers_between(const GpuPlace& a, const GpuPlace& b) const {
  const SiteFabric& fabric = site_fabrics[a.site];
  // Groups nest, so a route that must leave its group of tier t leaves those below it too: the
  // highest such tier decides. Rail-optimised groups keep only same-rail traffic inside.
  for (int t = static_cast<int>(fabric.tiers.size()) - 1; t >= 0; --t) {
    const FabricTierLinks& tier = fabric.tiers[t];
    const bool other_group = (a.node - fabric.first_node) / tier.nodes_per_group !=
                             (b.node - fabric.first_node) / tier.nodes_per_group;
    if (other_group || (tier.rail_optimized && a.local_index != b.local_index)) return t + 1;
  }
  return 0;
}

LinkId Cluster::Impl::tier_link(int tier, const GpuPlace& gpu, bool up) const {
  const SiteFabric& fabric = site_fabrics[gpu.site];
  const FabricTierLinks& links = fabric.tiers[tier];
  const int group = (gpu.node - fabric.first_node) / links.nodes_per_group;
  const std::size_t at =
      static_cast<std::size_t>(group) * links.rails + (links.rail_optimized ? gpu.local_index : 0);
  return up ? links.uplinks[at] : links.downlinks[at];
}

void Cluster::Impl::compose_route(GpuId from, GpuId to, std::vector<LinkId>& route) const {
  route.clear();
  const GpuPlace& a = gpus[from];
  const GpuPlace& b = gpus[to];
  if (a.node == b.node) {
    route.assign({attachments[from].to_node_switch, attachments[to].from_node_switch});
    return;
  }
  // A measured link between the two machines is the whole route.
  if (!pair_links.empty()) {
    const auto pair = pair_links.find(ordered_pair_key(a.node, b.node));
    if (pair != pair_links.end()) {
      route.push_back(pair->second);
      return;
    }
  }
  // Oversubscribed fabrics add the nodes' uplink and downlink between the NICs; switch tiers add
  // the uplinks of the groups the route leaves and the downlinks of those it enters. A route to
  // another site leaves every tier of its own (the WAN starts above the top one).
  const LinkId up = nodes[a.node].uplink;
  const LinkId down = nodes[b.node].downlink;
  const bool same_site = a.site == b.site;
  const int up_tiers = same_site ? tiers_between(a, b) : static_cast<int>(site_fabrics[a.site].tiers.size());
  const int down_tiers = same_site ? up_tiers : static_cast<int>(site_fabrics[b.site].tiers.size());
  route.push_back(attachments[from].nic_up);
  if (up >= 0) route.push_back(up);
  for (int t = 0; t < up_tiers; ++t) route.push_back(tier_link(t, a, true));
  if (!same_site) {
    const std::vector<LinkId>& wan = wan_path(a.site, b.site);
    route.insert(route.end(), wan.begin(), wan.end());
  }
  for (int t = down_tiers - 1; t >= 0; --t) route.push_back(tier_link(t, b, false));
  if (down >= 0) route.push_back(down);
  route.push_back(attachments[to].nic_down);
}

std::span<const LinkId> Cluster::route(GpuId from, GpuId to) const {
  check_gpu(*impl_, from);
  check_gpu(*impl_, to);
  if (from == to) return {};
  const std::uint64_t key = ordered_pair_key(from, to);
  if (const StoredRoute* stored = impl_->routes.find(key)) return {stored->links, stored->length};
  impl_->compose_route(from, to, impl_->route_scratch);
  const std::span<const LinkId> links = impl_->route_links.store(impl_->route_scratch);
  impl_->routes.insert(key, {links.data(), static_cast<std::uint32_t>(links.size())});
  return links;
}

double Cluster::route_latency_s(GpuId from, GpuId to) const {
  double total = 0;
  for (const LinkId id : route(from, to)) total += impl_->links[id].latency_s;
  return total;
}

double Cluster::route_bottleneck_bandwidth_bytes_per_s(GpuId from, GpuId to) const {
  double smallest = std::numeric_limits<double>::infinity();
  for (const LinkId id : route(from, to))
    smallest = std::min(smallest, impl_->links[id].bandwidth_bytes_per_s);
  return smallest;
}

double Cluster::route_egress_usd_per_byte(GpuId from, GpuId to) const {
  double total = 0;
  for (const LinkId id : route(from, to)) total += impl_->links[id].egress_usd_per_byte;
  return total;
}

}  // namespace hetsim

// Turns a ClusterSpec into the fabric graph: a vertex per GPU, per node switch and per site
// switch; two directed links per physical link. How configured latencies are split across the
// hops (README "Latency of a route"):
//   intra-node link   = intra_node latency / 2   (a same-node route crosses two of them)
//   NIC link          = (nic latency + site fabric latency) / 2
//   WAN link          = the WAN link's one-way latency
//   switch tier link  = the tier's latency / 2     (a route leaving a group takes an up and a down link)
//   pair link         = the measured one-way latency (the whole route between its two machines)
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/error.hpp"
#include "topologies/cluster_impl.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim {

namespace {

void check_spec(const ClusterSpec& spec) {
  if (spec.sites.empty()) throw Error(fmt::format("cluster \"{}\": no sites", spec.name));
  long long total_gpus = 0;
  long long total_nodes = 0;
  for (const auto& site : spec.sites) {
    if (site.node_groups.empty())
      throw Error(fmt::format("cluster \"{}\": site \"{}\" has no node groups", spec.name, site.name));
    for (const auto& group : site.node_groups) {
      if (group.count <= 0 || group.gpus_per_node <= 0)
        throw Error(fmt::format("cluster \"{}\": node group \"{}/{}\" has no GPUs", spec.name,
                                site.name, group.name));
      total_gpus += static_cast<long long>(group.count) * group.gpus_per_node;
      total_nodes += group.count;
    }
  }
  if (total_gpus > std::numeric_limits<int>::max() / 8)
    throw Error(fmt::format("cluster \"{}\": {} GPUs is more than ids can hold", spec.name, total_gpus));
  for (const auto& site : spec.sites)
    for (std::size_t t = 0; t < site.tiers.size(); ++t) {
      const FabricTierSpec& tier = site.tiers[t];
      if (tier.nodes_per_group <= 0 || !(tier.oversubscription > 0) ||
          (t > 0 && tier.nodes_per_group % site.tiers[t - 1].nodes_per_group != 0))
        throw Error(fmt::format("cluster \"{}\": site \"{}\": switch tier {} has {} nodes per group at "
                                "oversubscription {} (expected groups > 0 nodes that nest, ratio > 0)",
                                spec.name, site.name, t, tier.nodes_per_group, tier.oversubscription));
    }
  const std::size_t machines = spec.pair_links.nodes.size();
  if (spec.pair_links.figures.size() != machines ||
      std::any_of(spec.pair_links.figures.begin(), spec.pair_links.figures.end(),
                  [&](const auto& row) { return row.size() != machines; }) ||
      std::any_of(spec.pair_links.nodes.begin(), spec.pair_links.nodes.end(),
                  [&](int node) { return node < 0 || node >= total_nodes; }))
    throw Error(fmt::format("cluster \"{}\": pair links of {} machines need a {}x{} matrix and nodes "
                            "among the cluster's {}",
                            spec.name, machines, machines, machines, total_nodes));
  const int site_count = static_cast<int>(spec.sites.size());
  for (const auto& wan : spec.wan_links) {
    if (wan.site_a < 0 || wan.site_a >= site_count || wan.site_b < 0 || wan.site_b >= site_count ||
        wan.site_a == wan.site_b)
      throw Error(fmt::format("cluster \"{}\": a WAN link joins sites {} and {} of {}", spec.name,
                              wan.site_a, wan.site_b, site_count));
  }
}

class Builder {
 public:
  explicit Builder(Cluster::Impl& impl) : impl_(impl) {}

  LinkId add_link(int from_vertex, int to_vertex, std::string_view name, LinkClass link_class,
                  const LinkFigures& figures, double egress_usd_per_byte = 0) {
    const auto id = static_cast<LinkId>(impl_.links.size());
    const std::span<const char> stored = impl_.link_names.store(name);
    impl_.links.push_back(Link{{stored.data(), stored.size()}, link_class,
                               figures.bandwidth_bytes_per_s, figures.latency_s,
                               egress_usd_per_byte});
    impl_.link_from_vertex.push_back(from_vertex);
    impl_.link_to_vertex.push_back(to_vertex);
    return id;
  }

 private:
  Cluster::Impl& impl_;
};

// The graph of every link added, an edge per link from its from-vertex to its to-vertex.
FabricGraph fabric_graph(const Cluster::Impl& impl) {
  std::vector<std::pair<std::size_t, std::size_t>> ends(impl.links.size());
  std::vector<FabricEdge> edges(impl.links.size());
  for (std::size_t id = 0; id < impl.links.size(); ++id) {
    ends[id] = {static_cast<std::size_t>(impl.link_from_vertex[id]),
                static_cast<std::size_t>(impl.link_to_vertex[id])};
    edges[id] = FabricEdge{static_cast<LinkId>(id), impl.links[id].latency_s};
  }
  // The unsorted constructor places each vertex's edges in the order given (a stable counting
  // sort by source), so Dijkstra meets parallel links in the order they were added.
  return FabricGraph(boost::edges_are_unsorted_multi_pass, ends.begin(), ends.end(), edges.begin(),
                     impl.gpus.size() + impl.nodes.size() + impl.sites.size());
}

// The uplinks and downlinks of every switch tier (FabricTierSpec). Their switches are not
// vertices of their own: routes are composed, not searched, so the links are drawn at the site
// switch. A group's capacity is the injection bandwidth of its nodes' NICs (of one rail when
// rail-optimised) over the tier's oversubscription.
void add_switch_tiers(const ClusterSpec& spec, const std::vector<double>& node_nic_bytes_per_s,
                      Builder& builder, Cluster::Impl& impl) {
  impl.site_fabrics.resize(spec.sites.size());
  int first_node = 0;
  for (std::size_t s = 0; s < spec.sites.size(); ++s) {
    const SiteSpec& site = spec.sites[s];
    int site_nodes = 0;
    for (const auto& group : site.node_groups) site_nodes += group.count;
    SiteFabric& fabric = impl.site_fabrics[s];
    fabric.first_node = first_node;
    const int site_vertex = impl.site_switch_vertex(static_cast<int>(s));
    for (std::size_t t = 0; t < site.tiers.size(); ++t) {
      const FabricTierSpec& spec_tier = site.tiers[t];
      FabricTierLinks tier;
      tier.nodes_per_group = spec_tier.nodes_per_group;
      tier.rail_optimized = spec_tier.rail_optimized;
      if (tier.rail_optimized)
        for (const auto& group : site.node_groups) tier.rails = std::max(tier.rails, group.gpus_per_node);
      const int groups = (site_nodes + tier.nodes_per_group - 1) / tier.nodes_per_group;
      tier.uplinks.assign(static_cast<std::size_t>(groups) * tier.rails, -1);
      tier.downlinks.assign(tier.uplinks.size(), -1);
      for (int g = 0; g < groups; ++g) {
        const int begin = first_node + g * tier.nodes_per_group;
        const int end = first_node + std::min(site_nodes, (g + 1) * tier.nodes_per_group);
        for (int rail = 0; rail < tier.rails; ++rail) {
          double injection = 0;
          for (int n = begin; n < end; ++n) {
            const int nics = impl.nodes[n].gpu_count;
            injection += (tier.rail_optimized ? (rail < nics ? 1 : 0) : nics) * node_nic_bytes_per_s[n];
          }
          if (injection == 0) continue;
          const LinkFigures figures{injection / spec_tier.oversubscription, spec_tier.latency_s / 2};
          const std::string name = tier.rail_optimized
                                       ? fmt::format("{}/tier{}/group{}/rail{}", site.name, t, g, rail)
                                       : fmt::format("{}/tier{}/group{}", site.name, t, g);
          const std::size_t at = static_cast<std::size_t>(g) * tier.rails + rail;
          tier.uplinks[at] = builder.add_link(site_vertex, site_vertex, name + "/uplink", LinkClass::kFabric, figures);
          tier.downlinks[at] =
              builder.add_link(site_vertex, site_vertex, name + "/downlink", LinkClass::kFabric, figures);
        }
      }
      fabric.tiers.push_back(std::move(tier));
    }
    first_node += site_nodes;
  }
}

// One directed link per ordered pair of listed machines, node switch to node switch.
void add_pair_links(const ClusterSpec& spec, Builder& builder, Cluster::Impl& impl) {
  const auto& pairs = spec.pair_links;
  for (std::size_t i = 0; i < pairs.nodes.size(); ++i)
    for (std::size_t j = 0; j < pairs.nodes.size(); ++j) {
      if (i == j) continue;
      const int a = pairs.nodes[i], b = pairs.nodes[j];
      const LinkId id = builder.add_link(impl.node_switch_vertex(a), impl.node_switch_vertex(b),
                                         "pair/" + impl.nodes[a].name + "->" + impl.nodes[b].name,
                                         LinkClass::kWan, pairs.figures[i][j]);
      impl.pair_links.emplace(ordered_pair_key(a, b), id);
    }
}

}  // namespace

Cluster build_cluster(const ClusterSpec& spec) {
  check_spec(spec);
  Cluster cluster;
  Cluster::Impl& impl = cluster.impl();
  impl.name = spec.name;
  impl.description = spec.description;
  impl.source_file = spec.source_file;

  // Places first: GPU ids and node indexes in file order, so a node's GPUs are consecutive.
  for (std::size_t s = 0; s < spec.sites.size(); ++s) {
    impl.sites.push_back(Site{spec.sites[s].name});
    for (const auto& group : spec.sites[s].node_groups) {
      for (int k = 0; k < group.count; ++k) {
        NodeInfo node;
        node.name = node_name_in_group(spec.sites[s].name, group.name, k);
        node.site = static_cast<int>(s);
        node.first_gpu = static_cast<int>(impl.gpus.size());
        node.gpu_count = group.gpus_per_node;
        node.intra_node_bandwidth_bytes_per_s = group.intra_node.bandwidth_bytes_per_s;
        node.intra_node_latency_s = group.intra_node.latency_s;
        const int node_index = static_cast<int>(impl.nodes.size());
        impl.nodes.push_back(std::move(node));
        for (int g = 0; g < group.gpus_per_node; ++g)
          impl.gpus.push_back(GpuPlace{static_cast<int>(s), node_index, g, group.gpu_type, group.profile});
      }
    }
  }
  impl.attachments.resize(impl.gpus.size());
  // Two links per GPU inside multi-GPU nodes, two NIC links per GPU, two per node uplink, two
  // per WAN link.
  impl.links.reserve(impl.gpus.size() * 4 + impl.nodes.size() * 2 + spec.wan_links.size() * 2);
  impl.link_from_vertex.reserve(impl.links.capacity());
  impl.link_to_vertex.reserve(impl.links.capacity());

  Builder builder(impl);
  std::vector<double> node_nic_bytes_per_s(impl.nodes.size());  // per GPU of the node
  std::vector<std::string> gpu_names;  // of the node being added
  int node_index = 0;
  for (std::size_t s = 0; s < spec.sites.size(); ++s) {
    const SiteSpec& site = spec.sites[s];
    const int site_vertex = impl.site_switch_vertex(static_cast<int>(s));
    const std::string fabric_name = site.name + "/fabric";
    for (const auto& group : site.node_groups) {
      const LinkFigures intra{group.intra_node.bandwidth_bytes_per_s, group.intra_node.latency_s / 2};
      const LinkFigures nic{group.nic.bandwidth_bytes_per_s,
                            (group.nic.latency_s + site.fabric_latency_s) / 2};
      for (int k = 0; k < group.count; ++k, ++node_index) {
        NodeInfo& node = impl.nodes[node_index];
        node_nic_bytes_per_s[node_index] = group.nic.bandwidth_bytes_per_s;
        const int switch_vertex = impl.node_switch_vertex(node_index);
        if (site.oversubscription > 1) {
          // The node's share of an oversubscribed fabric: its NICs' bandwidth over the ratio.
          const LinkFigures uplink{group.gpus_per_node * group.nic.bandwidth_bytes_per_s /
                                       site.oversubscription,
                                   0.0};
          node.uplink = builder.add_link(switch_vertex, site_vertex, node.name + "/uplink",
                                         LinkClass::kFabric, uplink);
          node.downlink = builder.add_link(site_vertex, switch_vertex, node.name + "/downlink",
                                           LinkClass::kFabric, uplink);
        }
        // The node's links kind by kind, each kind's in GPU order: a transfer between two
        // workers' GPUs crosses consecutive NIC uplinks of one node and consecutive NIC
        // downlinks of the other, so the network's 16-byte entries per link (traffic, filling)
        // of the links it crosses lie four to a cache line, with no NVLink link's among them
        // (BENCHMARKS.md, 2026-12-06).
        gpu_names.clear();
        for (int g = 0; g < node.gpu_count; ++g)
          gpu_names.push_back(fmt::format("{}/gpu{}", node.name, g));
        const auto attachment = [&](int g) -> GpuAttachment& {
          return impl.attachments[node.first_gpu + g];
        };
        if (node.gpu_count > 1) {
          for (int g = 0; g < node.gpu_count; ++g)
            attachment(g).to_node_switch =
                builder.add_link(node.first_gpu + g, switch_vertex, gpu_names[g] + "->switch",
                                 LinkClass::kIntraNode, intra);
          for (int g = 0; g < node.gpu_count; ++g)
            attachment(g).from_node_switch = builder.add_link(
                switch_vertex, node.first_gpu + g, fmt::format("{}/switch->gpu{}", node.name, g),
                LinkClass::kIntraNode, intra);
        }
        for (int g = 0; g < node.gpu_count; ++g)
          attachment(g).nic_up =
              builder.add_link(node.first_gpu + g, site_vertex, gpu_names[g] + "->" + fabric_name,
                               LinkClass::kNic, nic);
        for (int g = 0; g < node.gpu_count; ++g)
          attachment(g).nic_down =
              builder.add_link(site_vertex, node.first_gpu + g, fabric_name + "->" + gpu_names[g],
                               LinkClass::kNic, nic);
      }
    }
  }

  add_switch_tiers(spec, node_nic_bytes_per_s, builder, impl);
  add_pair_links(spec, builder, impl);

  // Parallel WAN links between the same two sites get "#2", "#3"... so names stay unique.
  std::vector<std::vector<int>> links_between(spec.sites.size(),
                                              std::vector<int>(spec.sites.size(), 0));
  for (const auto& wan : spec.wan_links) {
    const int count = ++links_between[std::min(wan.site_a, wan.site_b)][std::max(wan.site_a, wan.site_b)];
    const std::string suffix = count > 1 ? fmt::format("#{}", count) : "";
    const std::string& a = spec.sites[wan.site_a].name;
    const std::string& b = spec.sites[wan.site_b].name;
    const LinkId forward = builder.add_link(impl.site_switch_vertex(wan.site_a),
                                            impl.site_switch_vertex(wan.site_b), a + "->" + b + suffix,
                                            LinkClass::kWan, wan.figures, wan.egress_usd_per_byte);
    const LinkId backward = builder.add_link(impl.site_switch_vertex(wan.site_b),
                                             impl.site_switch_vertex(wan.site_a), b + "->" + a + suffix,
                                             LinkClass::kWan, wan.figures, wan.egress_usd_per_byte);
    // A trace describes the link, so both directions follow it.
    if (!wan.bandwidth_trace.empty()) {
      impl.bandwidth_traces[forward] = wan.bandwidth_trace;
      impl.bandwidth_traces[backward] = wan.bandwidth_trace;
    }
  }

  impl.graph = fabric_graph(impl);
  impl.wan_route_message_bytes = spec.wan_route_message_bytes;
  impl.wan_paths.resize(impl.sites.size());
  if (impl.sites.size() > 1) {
    // WAN links are symmetric, so every site reachable from site 0 means every pair is joined.
    const auto from_first = least_cost_wan_paths(impl, 0);
    for (std::size_t s = 1; s < from_first.size(); ++s)
      if (!from_first[s])
        throw Error(fmt::format("cluster \"{}\": no WAN path between sites \"{}\" and \"{}\"",
                                spec.name, impl.sites[0].name, impl.sites[s].name));
    std::vector<std::vector<LinkId>> paths;
    paths.reserve(from_first.size());
    for (const auto& p : from_first) paths.push_back(*p);
    impl.wan_paths[0] = std::move(paths);
  }
  return cluster;
}

}  // namespace hetsim

// The site-order search of site_placement.hpp: candidates are orders of the sites, each scored by
// the bytes its rings and pipeline boundaries put on every WAN link.
#include "sim/site_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>

#include "base/error.hpp"
#include "sim/ring_collective.hpp"

namespace hetsim {
namespace {

// Every order of up to 8 sites is scored (8! = 40,320 candidates, each O(GPUs): 0.2 s for 64 GPUs,
// 0.5 s for 256 at -O2 on the development machine); beyond that the factorial is out of reach, and
// the search scores the file order plus one greedy chain from each site (see greedy_chains).
constexpr int kMaxExhaustiveSites = 8;

// Scores that differ by less than this fraction are equal: the same loads summed over different
// links can differ in the last bits, and such a difference must not beat the file order.
constexpr double kTieTolerance = 1e-9;

// The WAN links between every ordered pair of sites. A route's WAN links depend only on its two
// sites (Cluster::route joins the sites' WAN path between the GPUs' own links), so the route
// between the first GPUs of two sites gives them for every pair of their GPUs.
// What the search orders: the sites, or on a cluster of measured pair links (one site whose
// machines are joined pair by pair) the machines, whose pair links are its WAN links.
struct SiteRoutes {
  bool by_node = false;
  int sites = 0;
  std::vector<std::vector<LinkId>> wan;  // [from * sites + to]
  std::vector<int> wan_index;            // LinkId -> dense index among WAN links, -1 for others
  std::vector<LinkId> wan_links;         // dense index -> LinkId
};

int unit_of(const Cluster& cluster, const SiteRoutes& routes, GpuId g) {
  return routes.by_node ? cluster.gpu(g).node : cluster.gpu(g).site;
}

SiteRoutes site_routes(const Cluster& cluster) {
  SiteRoutes r;
  r.by_node = cluster.has_pair_links();
  r.sites = r.by_node ? cluster.node_count() : static_cast<int>(cluster.sites().size());
  std::vector<GpuId> first(static_cast<std::size_t>(r.sites), -1);
  for (GpuId g = cluster.gpu_count() - 1; g >= 0; --g) first[unit_of(cluster, r, g)] = g;
  r.wan_index.assign(cluster.links().size(), -1);
  for (std::size_t l = 0; l < cluster.links().size(); ++l) {
    if (cluster.links()[l].link_class != LinkClass::kWan) continue;
    r.wan_index[l] = static_cast<int>(r.wan_links.size());
    r.wan_links.push_back(static_cast<LinkId>(l));
  }
  r.wan.resize(static_cast<std::size_t>(r.sites) * r.sites);
  for (int a = 0; a < r.sites; ++a)
    for (int b = 0; b < r.sites; ++b) {
      if (a == b || first[a] < 0 || first[b] < 0) continue;
      for (const LinkId l : cluster.route(first[a], first[b]))
        if (cluster.links()[l].link_class == LinkClass::kWan) r.wan[a * r.sites + b].push_back(l);
    }
  return r;
}

enum Kind { kTensorParallel, kGradient, kActivation, kKinds };

SiteOrderScore score(const Cluster& cluster, const SiteRoutes& routes, const Placement& p,
                     const PlacementTraffic& traffic) {
  const int sites = routes.sites;
  std::array<std::vector<double>, kKinds> pair_bytes;
  for (auto& bytes : pair_bytes) bytes.assign(static_cast<std::size_t>(sites) * sites, 0);
  SiteOrderScore s;
  // Adds a hop's bytes to its pair of sites; true when the hop crosses a WAN link.
  const auto hop = [&](Kind kind, GpuId from, GpuId to, double bytes) {
    const int pair = unit_of(cluster, routes, from) * sites + unit_of(cluster, routes, to);
    if (routes.wan[pair].empty()) return false;
    pair_bytes[kind][pair] += bytes;
    return true;
  };
  const double tp_hop = ring_load(CollectiveOp::kAllReduce, p.tp, traffic.tensor_parallel_bytes).hop_bytes;
  for (int rank = 0; rank < p.pp; ++rank) {
    const double dp_hop = traffic.gradient_bytes.empty()
                              ? 0
                              : ring_load(CollectiveOp::kAllReduce, p.dp, traffic.gradient_bytes[rank]).hop_bytes;
    for (int d = 0; d < p.dp; ++d)
      for (int t = 0; t < p.tp; ++t) {
        const GpuId g = p.gpu(d, rank, t);
        if (p.tp > 1 && hop(kTensorParallel, g, p.gpu(d, rank, (t + 1) % p.tp), tp_hop))
          s.tensor_parallel_crosses_wan = true;
        if (p.dp > 1 && hop(kGradient, g, p.gpu((d + 1) % p.dp, rank, t), dp_hop))
          s.data_parallel_crosses_wan = true;
        if (rank + 1 < p.pp) {
          const GpuId next = p.gpu(d, rank + 1, t);
          hop(kActivation, g, next, traffic.activation_bytes / 2);
          hop(kActivation, next, g, traffic.activation_bytes / 2);
        }
      }
  }
  std::vector<double> load(routes.wan_links.size(), 0);
  std::array<double*, kKinds> kind_bytes = {&s.tensor_parallel_wan_bytes, &s.gradient_wan_bytes,
                                            &s.activation_wan_bytes};
  for (int kind = 0; kind < kKinds; ++kind)
    for (std::size_t pair = 0; pair < pair_bytes[kind].size(); ++pair) {
      const double bytes = pair_bytes[kind][pair];
      if (bytes == 0) continue;
      for (const LinkId l : routes.wan[pair]) {
        load[routes.wan_index[l]] += bytes;
        *kind_bytes[kind] += bytes;
      }
    }
  for (std::size_t i = 0; i < load.size(); ++i) {
    const Link& link = cluster.links()[routes.wan_links[i]];
    s.wan_seconds += load[i] / link.bandwidth_bytes_per_s;
    s.wan_bytes += load[i];
    s.wan_usd += load[i] * link.egress_usd_per_byte;
  }
  return s;
}

// Strictly better: fewer WAN seconds, or as many and fewer dollars (within kTieTolerance).
bool better(const SiteOrderScore& a, const SiteOrderScore& b) {
  const auto less = [](double x, double y) {
    return x < y - kTieTolerance * std::max(std::abs(x), std::abs(y));
  };
  if (less(a.wan_seconds, b.wan_seconds)) return true;
  if (less(b.wan_seconds, a.wan_seconds)) return false;
  return less(a.wan_usd, b.wan_usd);
}

// The GPUs site by site (machine by machine) in `site_order`, file order inside each.
std::vector<GpuId> layout(const Cluster& cluster, const SiteRoutes& routes, const std::vector<int>& site_order) {
  std::vector<std::vector<GpuId>> by_site(static_cast<std::size_t>(routes.sites));
  for (GpuId g = 0; g < cluster.gpu_count(); ++g) by_site[unit_of(cluster, routes, g)].push_back(g);
  std::vector<GpuId> order;
  order.reserve(static_cast<std::size_t>(cluster.gpu_count()));
  for (const int site : site_order)
    order.insert(order.end(), by_site[site].begin(), by_site[site].end());
  return order;
}

// Beyond kMaxExhaustiveSites: from each site in turn, append the unvisited site whose WAN path
// from the last one has the widest bottleneck (ties: the lower site index), so consecutive
// pipeline ranks sit across the fastest links the chain can find.
std::vector<std::vector<int>> greedy_chains(const Cluster& cluster, const SiteRoutes& routes) {
  const int sites = routes.sites;
  const auto bottleneck = [&](int a, int b) {
    double bandwidth = 0;
    for (const LinkId l : routes.wan[a * sites + b]) {
      const double bw = cluster.links()[l].bandwidth_bytes_per_s;
      bandwidth = bandwidth == 0 ? bw : std::min(bandwidth, bw);
    }
    return bandwidth;
  };
  std::vector<std::vector<int>> chains;
  for (int start = 0; start < sites; ++start) {
    std::vector<int> chain = {start};
    std::vector<bool> used(static_cast<std::size_t>(sites), false);
    used[start] = true;
    while (static_cast<int>(chain.size()) < sites) {
      int next = -1;
      for (int s = 0; s < sites; ++s)
        if (!used[s] && (next < 0 || bottleneck(chain.back(), s) > bottleneck(chain.back(), next)))
          next = s;
      used[next] = true;
      chain.push_back(next);
    }
    chains.push_back(std::move(chain));
  }
  return chains;
}

void check_plan(const Cluster& cluster, int tp, int pp, int dp, const PlacementTraffic& traffic) {
  if (tp < 1 || pp < 1 || dp < 1)
    throw PlanError(fmt::format("tp {}, pp {} and dp {} must all be >= 1", tp, pp, dp));
  if (static_cast<long long>(tp) * pp * dp != cluster.gpu_count())
    throw PlanError(fmt::format("tp {} x pp {} x dp {} = {} GPUs; the cluster has {}", tp, pp, dp,
                                static_cast<long long>(tp) * pp * dp, cluster.gpu_count()));
  // Node sizes: each size with the first node of that size and how many nodes have it.
  struct NodeSize {
    int gpus;
    int first_node;
    int nodes;
  };
  std::vector<NodeSize> sizes;
  bool divides = true;
  for (int n = 0; n < cluster.node_count(); ++n) {
    const int gpus = cluster.gpus_in_node(n);
    if (gpus % tp != 0) divides = false;
    const auto known =
        std::find_if(sizes.begin(), sizes.end(), [&](const NodeSize& s) { return s.gpus == gpus; });
    if (known == sizes.end())
      sizes.push_back({gpus, n, 1});
    else
      ++known->nodes;
  }
  if (!divides) {
    std::string listed;
    for (const NodeSize& s : sizes)
      listed += fmt::format("{}{} GPUs on {}{}", listed.empty() ? "" : ", ", s.gpus,
                            cluster.node_name(s.first_node),
                            s.nodes > 1 ? fmt::format(" and {} more nodes", s.nodes - 1) : "");
    throw PlanError(fmt::format(
        "tp {} does not divide the GPUs of every node ({}): a tensor-parallel group must sit "
        "inside one node",
        tp, listed));
  }
  if (!traffic.gradient_bytes.empty() && static_cast<int>(traffic.gradient_bytes.size()) != pp)
    throw PlanError(fmt::format("the traffic gives gradient bytes for {} pipeline ranks; pp is {}",
                                traffic.gradient_bytes.size(), pp));
  std::vector<double> all = traffic.gradient_bytes;
  all.push_back(traffic.tensor_parallel_bytes);
  all.push_back(traffic.activation_bytes);
  for (const double bytes : all)
    if (!(bytes >= 0) || std::isinf(bytes))
      throw PlanError(
          fmt::format("placement traffic of {} bytes; expected a finite number >= 0", bytes));
}

}  // namespace

SiteOrderScore score_placement(const Cluster& cluster, const Placement& placement,
                               const PlacementTraffic& traffic) {
  check_plan(cluster, placement.tp, placement.pp, placement.dp, traffic);
  if (!placement.order.empty() && static_cast<int>(placement.order.size()) != cluster.gpu_count())
    throw PlanError(fmt::format("the placement orders {} GPUs; the cluster has {}",
                                placement.order.size(), cluster.gpu_count()));
  return score(cluster, site_routes(cluster), placement, traffic);
}

Placement place_across_sites(const Cluster& cluster, int tp, int pp, int dp,
                             const PlacementTraffic& traffic, SitePlacementReport* report) {
  check_plan(cluster, tp, pp, dp, traffic);
  const SiteRoutes routes = site_routes(cluster);
  // GPU ids follow the file site by site, so the file order is the identity order of the sites.
  std::vector<int> file_order(static_cast<std::size_t>(routes.sites));
  std::iota(file_order.begin(), file_order.end(), 0);
  std::vector<std::vector<int>> site_orders;
  const bool exhaustive = routes.sites <= kMaxExhaustiveSites;
  if (exhaustive) {
    std::vector<int> order = file_order;
    do site_orders.push_back(order);
    while (std::next_permutation(order.begin(), order.end()));
  } else {
    site_orders.push_back(file_order);
    for (auto& chain : greedy_chains(cluster, routes))
      if (std::find(site_orders.begin(), site_orders.end(), chain) == site_orders.end())
        site_orders.push_back(std::move(chain));
  }

  SitePlacementReport found;
  found.exhaustive = exhaustive;
  found.machines = routes.by_node;
  Placement best{tp, pp, dp};
  for (std::size_t c = 0; c < site_orders.size(); ++c) {
    // The file order is the default placement: an empty order keeps it exactly.
    Placement candidate{tp, pp, dp,
                        c == 0 ? std::vector<GpuId>{} : layout(cluster, routes, site_orders[c])};
    SiteOrderScore s = score(cluster, routes, candidate, traffic);
    s.site_order = site_orders[c];
    if (c > 0 && better(s, found.candidates[found.chosen])) {
      found.chosen = c;
      best = std::move(candidate);
    }
    found.candidates.push_back(std::move(s));
  }
  if (report) *report = std::move(found);
  return best;
}

}  // namespace hetsim

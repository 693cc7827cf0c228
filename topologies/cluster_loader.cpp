// Reads and checks a cluster JSON (format: topologies/README.md), then builds it. Every check
// that a user can trip is made here, where the file and JSON path are known.
#include "topologies/cluster_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "base/error.hpp"
#include "base/json_input.hpp"
#include "base/units.hpp"
#include "topologies/bandwidth_variation.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/fabric_tiers_json.hpp"
#include "topologies/link_ranges.hpp"
#include "topologies/pair_links_json.hpp"

namespace hetsim {

namespace {

// Large enough for any cluster the simulator is meant for (the largest shipped one has 16,384
// GPUs), small enough that ids and link counts cannot overflow an int.
constexpr long long kMaxGpus = 1 << 20;

std::string json_text(const std::string& text) { return nlohmann::json(text).dump(); }

std::string non_empty_string(const JsonInput& object, const std::string& key) {
  std::string text = object.string(key);
  if (text.empty()) object.at(key).fail("a non-empty string");
  return text;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

// "did you mean" tail for a name that is not among `known`.
std::string suggestion(const std::string& word, const std::vector<std::string>& known) {
  const std::string nearest = nearest_word(word, known);
  return nearest.empty() ? "" : "; did you mean " + json_text(nearest) + "?";
}

double link_gbit_per_s(const JsonInput& in, const std::string& key) {
  return in.between(key, link_ranges::kMinGbps, link_ranges::kMaxGbps);
}
double link_gbyte_per_s(const JsonInput& in, const std::string& key) {
  return in.between(key, link_ranges::kMinGbps / 8, link_ranges::kMaxGbps / 8);
}

LinkFigures intra_node_figures(const JsonInput& intra) {
  intra.reject_unknown_keys({"bandwidth_GBps", "latency_us", "source"});
  return {units::gbyte_per_s_to_bytes(link_gbyte_per_s(intra, "bandwidth_GBps")),
          intra.between("latency_us", 0, link_ranges::kMaxLatencyS / units::kMicrosecond) * units::kMicrosecond};
}

LinkFigures nic_figures(const JsonInput& nic) {
  nic.reject_unknown_keys({"bandwidth_Gbps", "latency_us", "source"});
  return {units::gbit_per_s_to_bytes(link_gbit_per_s(nic, "bandwidth_Gbps")),
          nic.between("latency_us", 0, link_ranges::kMaxLatencyS / units::kMicrosecond) * units::kMicrosecond};
}

std::string beside(const std::string& cluster_file, const std::string& name);

NodeGroupSpec node_group(const JsonInput& in, const std::vector<std::string>& known_gpu_types) {
  in.reject_unknown_keys({"name", "count", "gpu", "gpus_per_node", "intra_node", "nic", "profile", "source",
                  "description"});
  NodeGroupSpec group;
  group.name = non_empty_string(in, "name");
  group.count = static_cast<int>(std::min(in.positive_integer("count"), kMaxGpus + 1));
  group.gpu_type = in.string("gpu");
  if (std::find(known_gpu_types.begin(), known_gpu_types.end(), group.gpu_type) ==
      known_gpu_types.end()) {
    throw InputError(in.file(), in.path() + "/gpu", json_text(group.gpu_type),
                     "a GPU type of the catalog (" + joined(known_gpu_types) + ")" +
                         suggestion(group.gpu_type, known_gpu_types));
  }
  group.gpus_per_node = static_cast<int>(std::min(in.positive_integer("gpus_per_node"), kMaxGpus + 1));
  group.intra_node = intra_node_figures(in.at("intra_node"));
  group.nic = nic_figures(in.at("nic"));
  // A calibration profile measured on this group's GPUs, relative to the cluster file.
  if (in.has("profile")) group.profile = beside(in.file(), non_empty_string(in, "profile"));
  return group;
}

SiteSpec site(const JsonInput& in, const std::vector<std::string>& known_gpu_types) {
  in.reject_unknown_keys({"name", "fabric", "node_groups", "source", "description"});
  SiteSpec spec;
  spec.name = non_empty_string(in, "name");
  const JsonInput fabric = in.at("fabric");
  fabric.reject_unknown_keys({"latency_us", "oversubscription", "tiers", "source"});
  spec.fabric_latency_s = fabric.non_negative("latency_us") * units::kMicrosecond;
  spec.oversubscription = fabric.number_or("oversubscription", 1.0);
  if (!(spec.oversubscription >= 1 && spec.oversubscription <= link_ranges::kMaxOversubscription))
    fabric.fail_member("oversubscription",
                       fmt::format("a ratio in [1, {:g}] (1 = non-blocking; 4 = nodes get a quarter of their "
                                   "NIC bandwidth into the fabric)",
                                   link_ranges::kMaxOversubscription));
  if (fabric.has("tiers")) spec.tiers = read_fabric_tiers(fabric.at("tiers"));
  const JsonInput groups = in.at("node_groups");
  if (groups.array_size() == 0) groups.fail("a non-empty array of node groups");
  std::map<std::string, std::size_t> seen;
  for (std::size_t g = 0; g < groups.array_size(); ++g) {
    const JsonInput group = groups.at(g);
    spec.node_groups.push_back(node_group(group, known_gpu_types));
    const std::string& name = spec.node_groups.back().name;
    if (const auto [it, fresh] = seen.emplace(name, g); !fresh) {
      throw InputError(in.file(), group.path() + "/name", json_text(name),
                       fmt::format("a node group name not used before in this site (node group "
                                   "{} is already {})",
                                   it->second, json_text(name)));
    }
  }
  return spec;
}

// A trace file named relative to the cluster file.
std::string beside(const std::string& cluster_file, const std::string& name) {
  const std::filesystem::path path(name);
  if (path.is_absolute()) return name;
  return (std::filesystem::path(cluster_file).parent_path() / path).string();
}

std::vector<BandwidthPoint> random_walk(const JsonInput& in, double start_bytes_per_s) {
  in.reject_unknown_keys({"seed", "step_s", "sigma", "min_Gbps", "max_Gbps", "duration_s", "source"});
  RandomWalkSpec walk;
  const long long seed = in.integer("seed");
  if (seed < 0) in.fail_member("seed", "an integer >= 0");
  walk.seed = static_cast<std::uint64_t>(seed);
  walk.step_s = in.positive("step_s");
  walk.sigma = in.non_negative("sigma");
  walk.min_bytes_per_s = units::gbit_per_s_to_bytes(in.positive("min_Gbps"));
  walk.max_bytes_per_s = units::gbit_per_s_to_bytes(in.positive("max_Gbps"));
  if (walk.max_bytes_per_s < walk.min_bytes_per_s)
    in.fail_member("max_Gbps", fmt::format("a bandwidth >= min_Gbps ({})", in.number("min_Gbps")));
  walk.duration_s = in.positive("duration_s");
  // One point per step: a cap keeps a typo in step_s from filling the memory.
  if (walk.duration_s / walk.step_s > static_cast<double>(kMaxBandwidthPoints))
    in.fail_member("step_s", fmt::format("at most {} steps in duration_s", kMaxBandwidthPoints));
  return random_walk_trace(start_bytes_per_s, walk);
}

WanLinkSpec wan_link(const JsonInput& in, const std::vector<std::string>& site_names) {
  in.reject_unknown_keys({"sites", "bandwidth_Gbps", "latency_ms", "egress_usd_per_GB",
                  "bandwidth_trace_file", "bandwidth_random_walk", "source", "description"});
  const JsonInput ends = in.at("sites");
  if (ends.array_size() != 2) ends.fail("an array of two site names");
  int index[2] = {0, 0};
  for (std::size_t e = 0; e < 2; ++e) {
    const JsonInput end = ends.at(e);
    if (!end.value().is_string()) end.fail("a site name (a string)");
    const std::string name = end.value().get<std::string>();
    const auto it = std::find(site_names.begin(), site_names.end(), name);
    if (it == site_names.end()) {
      end.fail("the name of a site in /sites (" + joined(site_names) + ")" +
               suggestion(name, site_names));
    }
    index[e] = static_cast<int>(it - site_names.begin());
  }
  if (index[0] == index[1]) ends.fail("two different site names");
  WanLinkSpec wan;
  wan.site_a = index[0];
  wan.site_b = index[1];
  wan.figures.bandwidth_bytes_per_s = units::gbit_per_s_to_bytes(link_gbit_per_s(in, "bandwidth_Gbps"));
  wan.figures.latency_s = in.between("latency_ms", 0, link_ranges::kMaxLatencyS / units::kMillisecond) * units::kMillisecond;
  wan.egress_usd_per_byte = in.between("egress_usd_per_GB", 0, link_ranges::kMaxEgressUsdPerGB) / units::kGB;
  if (in.has("bandwidth_trace_file") && in.has("bandwidth_random_walk"))
    in.fail_member("bandwidth_random_walk", "either bandwidth_trace_file or bandwidth_random_walk, not both");
  if (in.has("bandwidth_trace_file"))
    wan.bandwidth_trace = load_bandwidth_trace(beside(in.file(), non_empty_string(in, "bandwidth_trace_file")));
  if (in.has("bandwidth_random_walk"))
    wan.bandwidth_trace = random_walk(in.at("bandwidth_random_walk"), wan.figures.bandwidth_bytes_per_s);
  return wan;
}

// Union-find over sites joined by WAN links; returns the root of each site.
std::vector<int> site_components(std::size_t site_count, const std::vector<WanLinkSpec>& wans) {
  std::vector<int> parent(site_count);
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](int s) {
    while (parent[s] != s) s = parent[s] = parent[parent[s]];
    return s;
  };
  for (const auto& w : wans) parent[root(w.site_a)] = root(w.site_b);
  std::vector<int> roots(site_count);
  for (std::size_t s = 0; s < site_count; ++s) roots[s] = root(static_cast<int>(s));
  return roots;
}

// Node names by global index, as build_cluster() gives them ("site/group<k>").
std::vector<std::string> node_names(const ClusterSpec& spec) {
  std::vector<std::string> names;
  for (const SiteSpec& s : spec.sites)
    for (const NodeGroupSpec& g : s.node_groups)
      for (int k = 0; k < g.count; ++k) names.push_back(node_name_in_group(s.name, g.name, k));
  return names;
}

}  // namespace

ClusterSpec load_cluster_spec(const std::string& path, const std::vector<std::string>& known_gpu_types) {
  const nlohmann::json document = read_json_file(path);
  const JsonInput root(document, path);
  root.reject_unknown_keys(
      {"name", "description", "source", "sites", "wan_links", "wan_routing", "pair_links", "gpu_types"});
  ClusterSpec spec;
  spec.name = non_empty_string(root, "name");
  spec.description = root.string_or("description", "");
  spec.source_file = path;
  // The file's own GPU types join the catalog's for its node groups; their figures are read
  // with the catalog (GpuCatalog::with_types).
  std::vector<std::string> gpu_types = known_gpu_types;
  if (root.has("gpu_types")) {
    const JsonInput types = root.at("gpu_types");
    if (!types.value().is_object()) types.fail("an object of GPU type names to their figures");
    spec.gpu_types = types.value();
    for (const auto& [name, figures] : spec.gpu_types.items()) gpu_types.push_back(name);
  }

  const JsonInput sites = root.at("sites");
  if (sites.array_size() == 0) sites.fail("a non-empty array of sites");
  std::vector<std::string> site_names;
  long long gpu_total = 0;
  for (std::size_t s = 0; s < sites.array_size(); ++s) {
    const JsonInput in = sites.at(s);
    spec.sites.push_back(site(in, gpu_types));
    const std::string& name = spec.sites.back().name;
    const auto previous = std::find(site_names.begin(), site_names.end(), name);
    if (previous != site_names.end()) {
      throw InputError(path, in.path() + "/name", json_text(name),
                       fmt::format("a site name not used before (site {} is already {})",
                                   previous - site_names.begin(), json_text(name)));
    }
    site_names.push_back(name);
    const auto& groups = spec.sites.back().node_groups;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      gpu_total += static_cast<long long>(groups[g].count) * groups[g].gpus_per_node;
      if (gpu_total > kMaxGpus) {
        in.at("node_groups").at(g).fail_member(
            "count", fmt::format("a cluster of at most {} GPUs in all", kMaxGpus));
      }
    }
  }

  if (root.has("wan_links")) {
    const JsonInput wans = root.at("wan_links");
    for (std::size_t w = 0; w < wans.array_size(); ++w)
      spec.wan_links.push_back(wan_link(wans.at(w), site_names));
  }
  if (root.has("wan_routing")) {
    const JsonInput routing = root.at("wan_routing");
    routing.reject_unknown_keys({"message_MiB", "source"});
    spec.wan_route_message_bytes = routing.non_negative("message_MiB") * units::kMiB;
  }
  if (root.has("pair_links")) spec.pair_links = read_pair_links(root.at("pair_links"), node_names(spec));
  const std::vector<int> component = site_components(spec.sites.size(), spec.wan_links);
  for (std::size_t s = 1; s < spec.sites.size(); ++s) {
    if (component[s] != component[0]) {
      throw InputError(path, sites.at(s).path() + "/name",
                       fmt::format("site {} with no chain of wan_links to site {}",
                                   json_text(site_names[s]), json_text(site_names[0])),
                       "every site joined to the others by wan_links (routes must exist between "
                       "every pair of GPUs)");
    }
  }
  return spec;
}

Cluster load_cluster(const std::string& path, const std::vector<std::string>& known_gpu_types) {
  return build_cluster(load_cluster_spec(path, known_gpu_types));
}

}  // namespace hetsim

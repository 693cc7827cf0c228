// Leaving node groups and sites out of a cluster spec.
#include "tools/sweep/cluster_subset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/error.hpp"

namespace hetsim::sweep {

std::vector<std::string> node_group_names(const ClusterSpec& spec) {
  std::vector<std::string> names;
  for (const SiteSpec& site : spec.sites)
    for (const NodeGroupSpec& group : site.node_groups)
      names.push_back(site.name + "/" + group.name);
  return names;
}

void leave_out(ClusterSpec& spec, const std::vector<std::string>& names) {
  if (names.empty()) return;
  if (!spec.pair_links.nodes.empty())
    throw Error(
        fmt::format("leave_out: cluster {} has measured pair links, indexed by node; "
                    "leaving GPUs out would renumber them",
                    spec.source_file));
  std::set<std::string> known;
  for (const SiteSpec& site : spec.sites) known.insert(site.name);
  for (const std::string& name : node_group_names(spec)) known.insert(name);
  const std::set<std::string> removed(names.begin(), names.end());
  for (const std::string& name : removed)
    if (known.count(name) == 0)
      throw Error(
          fmt::format("leave_out: got \"{}\"; expected a site or \"site/group\" of "
                      "cluster {}: {}",
                      name, spec.source_file, fmt::join(known, ", ")));

  std::vector<int> new_index(spec.sites.size(), -1);
  std::vector<SiteSpec> kept;
  for (std::size_t s = 0; s < spec.sites.size(); ++s) {
    SiteSpec site = spec.sites[s];
    if (removed.count(site.name) != 0) continue;
    std::erase_if(site.node_groups, [&](const NodeGroupSpec& group) {
      return removed.count(site.name + "/" + group.name) != 0;
    });
    if (site.node_groups.empty()) continue;
    new_index[s] = static_cast<int>(kept.size());
    kept.push_back(std::move(site));
  }
  if (kept.empty())
    throw Error(fmt::format("leave_out: [{}] leaves no GPU of cluster {}", fmt::join(names, ", "),
                            spec.source_file));
  std::vector<WanLinkSpec> links;
  for (WanLinkSpec link : spec.wan_links) {
    if (new_index[link.site_a] < 0 || new_index[link.site_b] < 0) continue;
    link.site_a = new_index[link.site_a];
    link.site_b = new_index[link.site_b];
    links.push_back(std::move(link));
  }
  spec.sites = std::move(kept);
  spec.wan_links = std::move(links);
}

}  // namespace hetsim::sweep

#pragma once
// A cluster with some of its GPUs left out: whole node groups ("site/group") or whole sites
// ("site"). A plan need not use every GPU of a heterogeneous cluster; the sweep key `leave_out`
// and `hetsim plan` build the smaller cluster from the file's own figures.
#include <string>
#include <vector>

#include "topologies/cluster_spec.hpp"

namespace hetsim::sweep {

// Removes the named sites and node groups from `spec`; a site whose groups are all left out goes
// too, and so do the WAN links that touch a removed site (the others keep their figures).
// Throws Error naming the unknown entry (with the names the cluster has), for a spec with
// measured pair links (they are indexed by node), or when nothing would be left.
void leave_out(ClusterSpec& spec, const std::vector<std::string>& names);

// "site/group" of each node group of `spec`, in file order.
std::vector<std::string> node_group_names(const ClusterSpec& spec);

}  // namespace hetsim::sweep

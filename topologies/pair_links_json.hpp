#pragma once
// Reads the top-level `pair_links` of a cluster file: measured bandwidth and latency matrices
// between machines (format: topologies/README.md, "Pair links"). Every mistake is an InputError
// naming the file and the JSON path.
#include <string>
#include <vector>

#include "base/json_input.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim {

// `node_names` are the cluster's node names by global index ("site/group<k>").
PairLinksSpec read_pair_links(const JsonInput& in, const std::vector<std::string>& node_names);

}  // namespace hetsim

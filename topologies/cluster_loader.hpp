#pragma once
// Reads a cluster JSON (format documented in topologies/README.md) into a Cluster. Every error
// is an InputError naming the file and JSON path. GPU types are checked against `known_gpu_types`
// (the GPU catalog's names) so an unknown type fails at load time with a suggestion.
#include <string>
#include <vector>

#include "topologies/cluster.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim {

// The checked plain-value description of a cluster file, for callers that vary it (a node
// count, say) before build_cluster().
ClusterSpec load_cluster_spec(const std::string& path, const std::vector<std::string>& known_gpu_types);

Cluster load_cluster(const std::string& path, const std::vector<std::string>& known_gpu_types);

}  // namespace hetsim

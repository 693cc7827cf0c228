#pragma once
// Reads `sites[].fabric.tiers` of a cluster file (format: topologies/README.md, "Switch tiers").
// Every mistake is an InputError naming the file and the JSON path.
#include <vector>

#include "base/json_input.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim {

// `tiers` is the JSON array itself, leaves first.
std::vector<FabricTierSpec> read_fabric_tiers(const JsonInput& tiers);

}  // namespace hetsim

#pragma once
// The GPU catalog a cluster's GPUs are costed from: the shipped catalog together with the
// cluster file's own GPU types ("gpu_types": new types, or catalog types with figures changed).
#include "models/gpu_catalog.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim {

// `catalog` itself when the cluster defines no type. Throws InputError naming the cluster file
// and the JSON path of a bad entry.
GpuCatalog catalog_with_cluster_types(const GpuCatalog& catalog, const ClusterSpec& spec);

}  // namespace hetsim

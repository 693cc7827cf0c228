#include "sim/cluster_gpu_types.hpp"

namespace hetsim {

GpuCatalog catalog_with_cluster_types(const GpuCatalog& catalog, const ClusterSpec& spec) {
  if (spec.gpu_types.empty()) return catalog;
  return catalog.with_types(spec.gpu_types, spec.source_file, "/gpu_types");
}

}  // namespace hetsim

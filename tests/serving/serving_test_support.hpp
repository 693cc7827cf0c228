#pragma once
// What the serving tests share: the shipped GPU catalog, clusters and models.
#include <string>

#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::test {

inline std::string source_path(const std::string& relative) {
  return std::string(HETSIM_SOURCE_DIR) + "/" + relative;
}

inline const GpuCatalog& catalog() {
  static const GpuCatalog c = GpuCatalog::load(source_path("models/gpus"));
  return c;
}

inline Cluster shipped_cluster(const std::string& file) {
  return load_cluster(source_path("topologies/clusters/" + file), catalog().keys());
}

inline TransformerConfig shipped_model(const std::string& file) {
  return load_transformer_config(source_path("models/configs/" + file));
}

}  // namespace hetsim::test

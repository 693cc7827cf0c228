#pragma once
// The shipped GPU catalog, clusters and models the simulation tests run on, each loaded once.
#include <map>
#include <string>

#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::test {

inline const std::string& source_root() {
  static const std::string root = HETSIM_SOURCE_DIR;
  return root;
}

inline const GpuCatalog& shipped_catalog() {
  static const GpuCatalog catalog = GpuCatalog::load(source_root() + "/models/gpus");
  return catalog;
}

// topologies/clusters/<name>.json
inline const Cluster& shipped_cluster(const std::string& name) {
  static std::map<std::string, Cluster> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end())
    it = loaded
             .emplace(name, load_cluster(source_root() + "/topologies/clusters/" + name + ".json",
                                         shipped_catalog().keys()))
             .first;
  return it->second;
}

// models/configs/<name>.json
inline const TransformerConfig& shipped_model(const std::string& name) {
  static std::map<std::string, TransformerConfig> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end())
    it = loaded
             .emplace(name,
                      load_transformer_config(source_root() + "/models/configs/" + name + ".json"))
             .first;
  return it->second;
}

}  // namespace hetsim::test

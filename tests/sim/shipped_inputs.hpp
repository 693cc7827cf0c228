#pragma once
// The shipped GPU catalog, clusters and models the simulation tests run on, each loaded once.
#include <fstream>
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

// One site of `nodes` nodes of `gpus_per_node` GPUs of type `gpu`, NVLink of `nvlink_GBps` and
// 8 us, one NIC of `nic_Gbps` and 24 us per GPU, no fabric latency: written to
// /tmp/hetsim_sim_test_<name>.json and loaded.
inline Cluster one_group_cluster(const std::string& name, const std::string& gpu, int nodes, int gpus_per_node,
                                 double nvlink_GBps, double nic_Gbps) {
  const std::string path = "/tmp/hetsim_sim_test_" + name + ".json";
  std::ofstream(path) << R"({"name": ")" << name << R"(", "sites": [{"name": "lab",
    "fabric": {"latency_us": 0.0, "source": "test: the NIC latency includes the switch"},
    "node_groups": [{"name": "node", "count": )" << nodes << R"(, "gpu": ")" << gpu
                      << R"(", "gpus_per_node": )" << gpus_per_node << R"(,
      "intra_node": {"bandwidth_GBps": )" << nvlink_GBps << R"(, "latency_us": 8.0, "source": "test"},
      "nic": {"bandwidth_Gbps": )" << nic_Gbps << R"(, "latency_us": 24.0, "source": "test"}}]}]})";
  return load_cluster(path, shipped_catalog().keys());
}

}  // namespace hetsim::test

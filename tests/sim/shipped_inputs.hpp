#pragma once
// The shipped GPU catalog, clusters and models the simulation tests run on, each loaded once.
#include <fstream>
#include <map>
#include <string>
#include <vector>

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

// A node group of a test cluster: `count` nodes of `gpus_per_node` GPUs of type `gpu`, NVLink of
// `nvlink_GBps` and 8 us, one NIC of `nic_Gbps` and 24 us per GPU, and the measured profile at
// `profile` (a path from the source root) when it is not empty.
struct TestNodeGroup {
  std::string gpu;
  int count = 1;
  int gpus_per_node = 8;
  double nvlink_GBps = 370;
  double nic_Gbps = 400;
  std::string profile;
};

// One site of these node groups in this order, no fabric latency: written to
// /tmp/hetsim_sim_test_<name>.json and loaded.
inline Cluster one_site_cluster(const std::string& name, const std::vector<TestNodeGroup>& groups) {
  const std::string path = "/tmp/hetsim_sim_test_" + name + ".json";
  {
    std::ofstream file(path);
    file << R"({"name": ")" << name << R"(", "sites": [{"name": "lab",
      "fabric": {"latency_us": 0.0, "source": "test: the NIC latency includes the switch"},
      "node_groups": [)";
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const TestNodeGroup& group = groups[g];
      file << (g ? ", " : "") << R"({"name": "group)" << g << R"(", "count": )" << group.count
           << R"(, "gpu": ")" << group.gpu << R"(", "gpus_per_node": )" << group.gpus_per_node << R"(,
        "intra_node": {"bandwidth_GBps": )" << group.nvlink_GBps << R"(, "latency_us": 8.0, "source": "test"},
        "nic": {"bandwidth_Gbps": )" << group.nic_Gbps << R"(, "latency_us": 24.0, "source": "test"})";
      if (!group.profile.empty()) file << R"(, "profile": ")" << source_root() << "/" << group.profile << '"';
      file << "}";
    }
    file << "]}]}";
  }
  return load_cluster(path, shipped_catalog().keys());
}

// One site of `nodes` nodes of one kind (one_site_cluster's figures).
inline Cluster one_group_cluster(const std::string& name, const std::string& gpu, int nodes, int gpus_per_node,
                                 double nvlink_GBps, double nic_Gbps) {
  return one_site_cluster(name, {TestNodeGroup{gpu, nodes, gpus_per_node, nvlink_GBps, nic_Gbps, ""}});
}

}  // namespace hetsim::test

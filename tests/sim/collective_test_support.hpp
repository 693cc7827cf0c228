#pragma once
// The shipped 4-node DGX H100 cluster and its first GPUs, shared by the collective tests.
#include <numeric>
#include <string>
#include <vector>

#include "topologies/cluster_loader.hpp"

namespace hetsim::test {

inline const Cluster& dgx_h100_4node() {
  static const Cluster cluster = load_cluster(
      std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/dgx-h100-4node.json", {"h100-sxm"});
  return cluster;
}

inline std::vector<GpuId> first_gpus(int n) {
  std::vector<GpuId> gpus(static_cast<std::size_t>(n));
  std::iota(gpus.begin(), gpus.end(), 0);
  return gpus;
}

}  // namespace hetsim::test

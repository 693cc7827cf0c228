#pragma once
// Which GPU runs which part of the plan. Megatron-LM's default rank order ("tp-cp-ep-dp-pp"):
// tensor-parallel ranks vary fastest, then data-parallel, then pipeline. By default global rank i
// is the cluster's GPU i (file order), so a tensor-parallel group fills consecutive GPUs of a node;
// `order` maps global ranks to other GPUs (place_across_sites in site_placement.hpp fills it).
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

struct Placement {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  // order[global Megatron rank] = the GPU that runs it; empty: GPU i runs rank i.
  std::vector<GpuId> order = {};
  int gpu(int replica, int rank, int tp_index) const {
    const int global_rank = tp_index + tp * (replica + dp * rank);
    return order.empty() ? global_rank : order[static_cast<std::size_t>(global_rank)];
  }
  // Workers are numbered replica * pp + rank, as the replay numbers them.
  int replica_of(int worker) const { return worker / pp; }
  int rank_of(int worker) const { return worker % pp; }
  int workers() const { return dp * pp; }
  std::vector<int> worker_gpus(int worker) const {
    std::vector<int> gpus;
    for (int t = 0; t < tp; ++t) gpus.push_back(gpu(replica_of(worker), rank_of(worker), t));
    return gpus;
  }
};

}  // namespace hetsim

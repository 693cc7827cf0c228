#pragma once
// Which GPU runs which part of the plan. Megatron-LM's default rank order ("tp-cp-ep-dp-pp"):
// tensor-parallel ranks vary fastest, then context-parallel, then data-parallel, then pipeline
// (Megatron-core's RankGenerator; ep groups are made of data-parallel replicas, see
// models/parallel_plan.hpp). By default global rank i is the cluster's GPU i (file order), so a
// tensor-parallel group fills consecutive GPUs of a node and a context-parallel group is cp
// consecutive tensor-parallel groups; `order` maps global ranks to other GPUs
// (place_across_sites in site_placement.hpp fills it).
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

struct Placement {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  // order[global Megatron rank] = the GPU that runs it; empty: GPU i runs rank i.
  std::vector<GpuId> order = {};
  int cp = 1;  // context-parallel size
  int gpu(int replica, int rank, int tp_index, int cp_index = 0) const {
    const int global_rank = tp_index + tp * (cp_index + cp * (replica + dp * rank));
    return order.empty() ? global_rank : order[static_cast<std::size_t>(global_rank)];
  }
  // Workers are numbered replica * pp + rank, as the replay numbers them. A worker is one
  // (replica, pipeline rank) cell: its tp x cp GPUs run the same ops in lockstep.
  int replica_of(int worker) const { return worker / pp; }
  int rank_of(int worker) const { return worker % pp; }
  int workers() const { return dp * pp; }
  // Every GPU of the worker, context-parallel index major, tensor-parallel index minor.
  std::vector<int> worker_gpus(int worker) const {
    std::vector<int> gpus;
    for (int c = 0; c < cp; ++c)
      for (int t = 0; t < tp; ++t) gpus.push_back(gpu(replica_of(worker), rank_of(worker), t, c));
    return gpus;
  }
  // One tensor-parallel group of the worker: the GPUs a TP collective runs over.
  std::vector<int> tensor_parallel_gpus(int worker, int cp_index = 0) const {
    std::vector<int> gpus;
    for (int t = 0; t < tp; ++t) gpus.push_back(gpu(replica_of(worker), rank_of(worker), t, cp_index));
    return gpus;
  }
  // One context-parallel ring of the worker, at tensor-parallel index `tp_index`, in ring order.
  std::vector<int> context_parallel_gpus(int worker, int tp_index) const {
    std::vector<int> gpus;
    for (int c = 0; c < cp; ++c) gpus.push_back(gpu(replica_of(worker), rank_of(worker), tp_index, c));
    return gpus;
  }
  // The GPUs of pipeline rank `rank` at tensor-parallel index `tp_index` that hold the same
  // weights: Megatron's data-parallel group with context parallelism, dp x cp of them, in rank
  // order (context-parallel index fastest).
  std::vector<int> data_parallel_gpus(int rank, int tp_index) const {
    std::vector<int> gpus;
    for (int d = 0; d < dp; ++d)
      for (int c = 0; c < cp; ++c) gpus.push_back(gpu(d, rank, tp_index, c));
    return gpus;
  }
};

}  // namespace hetsim

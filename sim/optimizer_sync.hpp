#pragma once
// What Megatron-LM's optimizer step waits for before it updates any weight: the gradient norm
// (--clip-grad, on by default) all-reduced over the group that holds the gradients, and with
// fp16 the loss scaler's found-inf flag before it, each a one-float all-reduce. The group is the
// model-parallel group (tp x pp GPUs of a replica) without the distributed optimizer and the
// whole world with it (megatron/core/optimizer get_grad_stats_parallel_group), so every
// pipeline rank steps only once every rank has its gradients reduced.
#include "models/parallel_plan.hpp"
#include "sim/placement.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct OptimizerSync {
  bool across_ranks = false;  // the group spans more than one GPU: ranks step together
  double seconds = 0;         // the all-reduces' time once the last rank is ready
  int all_reduces = 0;
};

// Each all-reduce of one float is latency alone: a reduce to the group's first GPU and a
// broadcast back, 2 x the longest route latency from that GPU to any GPU of the group (every
// GPU one hop below the root, the least a reduce-then-broadcast pays: NCCL's tree adds levels
// inside and across nodes on top). Each replica's group runs at once; the slowest counts.
OptimizerSync optimizer_sync(const Cluster& cluster, const ParallelPlan& plan, const Placement& placement);

}  // namespace hetsim

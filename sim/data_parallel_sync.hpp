#pragma once
// The data-parallel synchronisation of a plan, as Megatron-core sets it up: for each pipeline
// rank, the rings its replicas reduce over (one per tensor-parallel index, GPUs of the same
// tensor-parallel index in rank order, on the cluster's routes: the dp x cp GPUs of Megatron's
// data-parallel group with context parallelism; for MoE routed-expert weights,
// the expert-data-parallel rings of every ep-th replica) and the buckets of each model chunk's
// gradients, ready for the replay (sim/gradient_sync.hpp). Dense and expert buckets reduce on
// two streams of the rank, as Megatron gives the expert group its own communicator.
//
// Buckets follow megatron/core/distributed: a chunk's fp32 gradients (bf16 training reduces in
// fp32: Megatron-LM's validate_args turns on accumulate_allreduce_grads_in_fp32 for bf16) are cut
// into buckets of `bucket_size` parameters, by default max(40,000,000, 1,000,000 x dp) (the
// DistributedDataParallel default, so each ring chunk stays large enough to be bandwidth-bound),
// filled in backward order, so bucket i is complete after (i+1) * bucket_size / P of the chunk's
// last backward; model chunks after the first on a rank keep one bucket (Megatron disables
// bucketing for model_chunk_idx > 0), as does every chunk without --overlap-grad-reduce. With the
// distributed optimizer (ZeRO-1) each bucket is reduce-scattered and its updated bf16 parameters
// all-gathered after the optimizer step; otherwise it is all-reduced. ZeRO-2 keeps only its
// shard of the gradients, so every microbatch's backward reduce-scatters its buckets (DeepSpeed's
// stage 2 reduces at each micro-step), m times the traffic of stage 1. ZeRO-3 reduce-scatters
// the same way, keeps no parameter all-gather after the step, and instead gathers each chunk's
// bf16 parameters before every forward and backward op (sim/weight_gathers.hpp).
#include <vector>

#include "models/chunk_cost.hpp"
#include "models/parallel_plan.hpp"
#include "sim/rank_sync.hpp"
#include "sim/placement.hpp"
#include "sim/ring_collective.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct DataParallelOptions {
  bool overlap_grad_reduce = false;  // --overlap-grad-reduce
  // --overlap-param-gather: the distributed optimizer's parameter all-gathers become gathers
  // before each chunk's first forward (of the next iteration: the replay is one steady iteration).
  bool overlap_param_gather = false;
  double bucket_params = 0;          // --ddp-bucket-size; 0: Megatron's default
  double wan_compression = 1;        // bytes crossing a WAN link are divided by it
};

// The rings of one collective group, each on its channels (one per NIC its nodes use,
// ring_channels, each carrying an equal share of the bytes), and their alpha-beta bottleneck.
struct RingGroup {
  std::vector<RingHops> hops;  // every channel of every ring
  RingBottleneck bottleneck;
  double channels_per_ring = 1;  // the same for every ring of the group
};
RingGroup ring_group(const Cluster& cluster, const std::vector<std::vector<GpuId>>& rings, double wan_compression);

// A collective of `bytes` per GPU over `group` (index `group_index` among its owner's groups),
// with its alpha-beta time on the group's bottleneck.
BucketCollective group_collective(const RingGroup& group, int group_index, CollectiveOp op, double bytes, int chunk,
                                  double ready_fraction);

// ZeRO-3's gathered weights on one GPU at their peak, beyond its shard: the largest unit twice
// (the one being computed on and the one being prefetched); 0 for other stages.
double gathered_weight_bytes(const RankSync& sync);

// Megatron's default bucket size in parameters for `dp` data-parallel replicas (dp x cp GPUs with
// context parallelism: Megatron sizes it by the data-parallel group with context parallelism).
double default_bucket_params(int dp);

// [pipeline rank] -> its synchronisation. `costs` is [worker][chunk] as the replay takes it
// (worker = replica * pp + rank). Ranks with dp x cp == 1 get no collectives.
std::vector<RankSync> data_parallel_sync(const Cluster& cluster, const ParallelPlan& plan,
                                         const Placement& placement,
                                         const std::vector<std::vector<ChunkCost>>& costs,
                                         const DataParallelOptions& options);

}  // namespace hetsim

#pragma once
// How a model is split over the GPUs, in Megatron-LM's terms.
#include <vector>

#include "models/gpu_catalog.hpp"

namespace hetsim {

enum class Recompute { kNone, kSelective, kFull };
const char* to_string(Recompute r);

struct ParallelPlan {
  int tp = 1;                   // --tensor-model-parallel-size
  int pp = 1;                   // --pipeline-model-parallel-size
  int dp = 1;                   // derived: GPUs / (tp * pp)
  int vpp = 1;                  // model chunks per pipeline rank (interleaving)
  int micro_batch_size = 1;     // --micro-batch-size
  int global_batch_size = 1;    // --global-batch-size
  int seq_length = 2048;        // --seq-length
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  bool flash_attention = false;  // no s^2 score/softmax tensors kept (FlashAttention)
  Dtype dtype = Dtype::kBf16;
  bool distributed_optimizer = false;  // ZeRO-1 style sharding of optimizer state over dp
  // --expert-model-parallel-size: an expert-parallel group is ep consecutive data-parallel
  // replicas (Megatron's rank order tp-cp-ep-dp-pp), so ep divides dp; each GPU of the group
  // holds num_experts / ep of every MoE layer's experts.
  int ep = 1;
  // ZeRO stage (Rajbhandari et al., SC'20, section 5), each sharding over the data-parallel
  // group: 0 nothing; 1 the optimizer state (Megatron's distributed optimizer); 2 also the fp32
  // gradients; 3 also the weights (ZeRO-3 / FSDP).
  int zero_stage = 0;
  int microbatches() const { return global_batch_size / (micro_batch_size * dp); }
  int virtual_stages() const { return pp * vpp; }
  // The stage in force: distributed_optimizer alone means stage 1.
  int effective_zero_stage() const {
    const int from_flag = distributed_optimizer ? 1 : 0;
    return zero_stage > from_flag ? zero_stage : from_flag;
  }
  // Replicas one expert's weights are copied over (and their gradients reduced over):
  // Megatron's expert-data-parallel group, dp / ep.
  int expert_data_parallel() const { return dp / ep; }
};

// Throws PlanError when dp, ep or zero_stage is out of range or ep does not divide dp.
void check_data_parallel_sharding(const ParallelPlan& plan);

}  // namespace hetsim

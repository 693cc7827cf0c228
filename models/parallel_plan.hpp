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
  int microbatches() const { return global_batch_size / (micro_batch_size * dp); }
  int virtual_stages() const { return pp * vpp; }
};

}  // namespace hetsim

#pragma once
// How a model is split over the GPUs, in Megatron-LM's terms.
#include <vector>

#include "models/gpu_catalog.hpp"

namespace hetsim {

enum class Recompute { kNone, kSelective, kFull };
const char* to_string(Recompute r);

// --fp8-format: Transformer Engine's FP8 recipes (transformer_engine.common.recipe.Format) on
// top of the plan's bf16 base. E4M3 everywhere, or hybrid: E4M3 forward, E5M2 gradients. Both
// run the tensor cores at the same FP8 peak; see models/fp8_cost.hpp for what FP8 changes.
enum class Fp8Format { kNone, kE4M3, kHybrid };
const char* to_string(Fp8Format f);

struct ParallelPlan {
  int tp = 1;                   // --tensor-model-parallel-size
  int pp = 1;                   // --pipeline-model-parallel-size
  int dp = 1;                   // derived: GPUs / (tp * cp * pp)
  // --context-parallel-size: every sequence is split over cp GPUs (models/context_parallel.hpp);
  // a context-parallel group is cp consecutive tensor-parallel groups (rank order tp-cp-ep-dp-pp).
  int cp = 1;
  int vpp = 1;                  // model chunks per pipeline rank (interleaving)
  int micro_batch_size = 1;     // --micro-batch-size
  int global_batch_size = 1;    // --global-batch-size
  int seq_length = 2048;        // --seq-length
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  // --scatter-gather-tensors-in-pipeline: Megatron-LM's pipeline scatter/gather optimisation
  // (Narayanan et al., SC'21, Sec. 4.1; on by default in Megatron-LM until Megatron-core, which
  // dropped it): without sequence parallelism each tensor-parallel rank sends 1/tp of the
  // replicated output over its own NIC and the receiver all-gathers it over NVLink.
  bool scatter_gather_p2p = false;
  bool flash_attention = false;  // no s^2 score/softmax tensors kept (FlashAttention)
  // --bf16 / --fp16 / --fp32: the dtype of weights, activations and every GEMM (the linear
  // layers' GEMMs in FP8 when `fp8` is set). kTf32 is fp32 training whose matmuls run in TF32
  // (--fp32, PyTorch's allow_tf32), kFp32 the same with plain fp32 matmuls (--fp32 --no-tf32).
  Dtype dtype = Dtype::kBf16;
  Fp8Format fp8 = Fp8Format::kNone;  // --fp8-format
  // --accumulate-allreduce-grads-in-fp32: keep fp32 main grads and reduce them in fp32. Megatron
  // forces it on for bf16 (arguments.py: "bfloat16 requires gradient accumulation and
  // all-reduce to be done in fp32"), so it matters for fp16 runs only; see grads_in_fp32().
  bool accumulate_allreduce_grads_in_fp32 = false;
  // Megatron-LM's asynchronous TP all-reduce (on unless --no-async-tensor-model-parallel-allreduce;
  // absent before late 2021): without sequence parallelism a column-parallel layer's input
  // gradient is all-reduced beside its wgrad GEMM. Off, the GPU waits for it after the layer's
  // whole backward (models/tp_collectives.cpp).
  bool async_tp_allreduce = true;
  // Megatron-LM's gradient-accumulation fusion (on unless --no-gradient-accumulation-fusion;
  // absent before 2022): the wgrad GEMM accumulates straight into the main grad. Off, it writes
  // the weight gradient in the training dtype and a separate kernel adds it into the main grad
  // every microbatch (models/layer_ops.cpp).
  bool gradient_accumulation_fusion = true;
  bool distributed_optimizer = false;  // ZeRO-1 style sharding of optimizer state over dp
  // --expert-model-parallel-size: an expert-parallel group is ep consecutive data-parallel
  // replicas (Megatron's rank order tp-cp-ep-dp-pp), so ep divides dp; each GPU of the group
  // holds num_experts / ep of every MoE layer's experts.
  int ep = 1;
  // ZeRO stage (Rajbhandari et al., SC'20, section 5), each sharding over the data-parallel
  // group: 0 nothing; 1 the optimizer state (Megatron's distributed optimizer); 2 also the fp32
  // gradients; 3 also the weights (ZeRO-3 / FSDP).
  int zero_stage = 0;
  bool grads_in_fp32() const {
    return dtype != Dtype::kFp16 || accumulate_allreduce_grads_in_fp32;
  }
  // Each tensor-parallel rank sends 1/pipeline_send_shards() of a stage's output: its sequence
  // shard with sequence parallelism, its slice with scatter/gather, else the whole tensor.
  int pipeline_send_shards() const { return sequence_parallel || scatter_gather_p2p ? tp : 1; }
  int microbatches() const { return global_batch_size / (micro_batch_size * dp); }
  // Tokens of each sequence one GPU holds: seq_length / cp (check_context_parallel makes it whole).
  double local_seq_length() const { return static_cast<double>(seq_length) / cp; }
  // The GPUs a weight is replicated over, its gradients reduced and its optimizer state sharded
  // over: Megatron-core's data-parallel group with context parallelism folded in
  // (parallel_state.get_data_parallel_group(with_context_parallel=True)), dp x cp.
  int data_parallel_with_context() const { return dp * cp; }
  int virtual_stages() const { return pp * vpp; }
  // The stage in force: distributed_optimizer alone means stage 1.
  int effective_zero_stage() const {
    const int from_flag = distributed_optimizer ? 1 : 0;
    return zero_stage > from_flag ? zero_stage : from_flag;
  }
  // Replicas one expert's weights are copied over (and their gradients reduced over):
  // Megatron's expert-data-parallel group, dp x cp / ep (its expert rank order folds cp into
  // the data-parallel dimension).
  int expert_data_parallel() const { return dp * cp / ep; }
};

// Throws PlanError when dp, ep or zero_stage is out of range or ep does not divide dp.
void check_data_parallel_sharding(const ParallelPlan& plan);

// Throws PlanError naming --context-parallel-size when cp < 1 or, for cp > 1, the sequence does not split
// into 2 x cp chunks (causal load balancing; Megatron-core asserts the same in
// get_batch_on_this_cp_rank).
void check_context_parallel(const ParallelPlan& plan);

}  // namespace hetsim

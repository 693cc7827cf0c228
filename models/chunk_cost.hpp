#pragma once
// What one model chunk (a contiguous run of layers, plus the embedding on the first virtual
// stage and the LM head on the last) costs one GPU of its tensor-parallel group for one
// microbatch: op times on that GPU type, tensor-parallel collective time on the node's links,
// activation bytes kept from F to B, and the static memory of its parameters.
#include "models/calibration/profile.hpp"
#include "models/gpu_catalog.hpp"
#include "models/op_cost.hpp"
#include "models/parallel_plan.hpp"
#include "models/precision.hpp"
#include "models/transformer_config.hpp"

namespace hetsim {

struct ChunkSpan {
  int first_layer = 0;
  int num_layers = 0;
  bool has_embedding = false;  // first virtual stage
  bool has_lm_head = false;    // last virtual stage (LM head + loss)
};

// The links a tensor-parallel group's collectives run on (the node's intra-node fabric).
struct TensorParallelLinks {
  double bandwidth_bytes_per_s = 0;  // per GPU per direction
  double latency_s = 0;
};

// What one GPU gets in an all-to-all of its expert-parallel group: the bandwidth its outgoing
// bytes leave at (per direction) and the latency of one all-to-all.
struct ExpertParallelLinks {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

// The links a context-parallel ring sends its key/value blocks on: each GPU's route to the next
// GPU of its context-parallel group (NVLink inside a node, the fabric across nodes).
struct ContextParallelLinks {
  double bandwidth_bytes_per_s = 0;  // per GPU per direction, with every ring of the group sending
  double latency_s = 0;
};

struct ChunkCost {
  // Seconds on one GPU, tensor-parallel collectives included. An unsplit backward (B) takes
  // backward_input_s + backward_weight_s + recompute_s; when B and W are split, B takes
  // backward_input_s + recompute_s and W takes backward_weight_s.
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  double recompute_s = 0;
  // Of backward_input_s, the TP collective time that hides beside the wgrad GEMMs when B and W
  // run as one op (Megatron's input-gradient all-reduce / reduce-scatter; TpOverlap::kWgrad).
  double backward_overlap_s = 0;
  double tp_comm_forward_s = 0;   // part of forward_s spent in TP collectives
  double tp_comm_backward_s = 0;  // part of backward_input_s spent waiting for TP collectives
  double tp_bytes_forward = 0;    // bytes one GPU sends in TP collectives, forward
  double tp_bytes_backward = 0;   // and backward (recompute not included)
  double ep_comm_forward_s = 0;   // part of forward_s spent in expert-parallel all-to-alls
  double ep_comm_backward_s = 0;  // part of backward_input_s spent in expert-parallel all-to-alls
  double ep_comm_recompute_s = 0;  // part of recompute_s: full recompute's forward all-to-alls again
  // Context parallelism (models/context_parallel.hpp): the ring's transfer time no attention
  // step hides, part of forward_s and of backward_input_s (and of recompute_s, which runs the
  // forward ring again), and the bytes one GPU sends round the ring (recompute not included).
  double cp_comm_forward_s = 0;
  double cp_comm_backward_s = 0;
  double cp_bytes_forward = 0;
  double cp_bytes_backward = 0;
  // FLOPs on one GPU: model FLOPs (no recompute) and the recompute FLOPs on top.
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  double recompute_flops = 0;
  // Bytes on one GPU.
  double activation_bytes = 0;        // allocated at F, freed at B (unsplit) or W (split)
  double weight_grad_bytes = 0;       // GEMM inputs W still reads after B (freed at W); see models/README.md
  double output_bytes = 0;            // the activation tensor sent to the next stage (whole)
  // Bytes live on top of activation_bytes while B runs: with recompute, what the layer being
  // recomputed re-materializes (layer_recompute_transient_bytes) and, with context parallelism,
  // the ring's blocks in flight (ContextParallelRing::backward_buffer_bytes); else 0.
  double backward_transient_bytes = 0;
  double params = 0;                  // parameters held by one GPU for this chunk
  // The part of `params` that are routed-expert weights: their gradients are reduced over, and
  // ZeRO shards them over, the expert-data-parallel group (dp / ep), not dp.
  double expert_params = 0;
  int layers = 0;                     // transformer layers (ZeRO-3 gathers them one by one)
  double optimizer_step_s = 0;        // Adam step over those parameters
  // B as one op with W (1F1B, GPipe, interleaved): its parts with the TP collectives that hide
  // beside the wgrad GEMMs taken off. Split schedules run backward_input_s + recompute_s as B
  // and backward_weight_s as W.
  double fused_backward_s() const {
    return backward_input_s + backward_weight_s + recompute_s - backward_overlap_s;
  }
  friend bool operator==(const ChunkCost&, const ChunkCost&) = default;
};

// Every op costed by the roofline (models/roofline.hpp) and every TP collective by the ring
// formula (models/tp_collectives.hpp): cost_chunk with no profile. The span's layers are costed
// as they are: DeepSeek's first dense layers as dense, the rest alike; the chunk holding the LM
// head also runs the model's multi-token prediction depths. `ep_links` are needed (a
// positive bandwidth) when plan.ep > 1: each MoE layer then does two all-to-alls in forward
// (token dispatch and combine) and two in backward (ep_all_to_all_seconds). `cp_links` are
// needed when plan.cp > 1: each layer's attention runs the context-parallel ring on them.
// Throws PlanError for a plan the model cannot take (ep not dividing the experts or dp, ep > 1
// on a dense model, a sequence context parallelism cannot split, missing links).
ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const ExpertParallelLinks& ep_links = {},
                     const ContextParallelLinks& cp_links = {});

// Ops costed from `profile` (measured on `gpu`'s type, in plan.dtype) where it has them, from the
// roofline where it lacks them (models/op_cost.hpp says which lookup each op class uses); TP
// collectives from the profile's measured collectives where it has them, else the ring formula
// on `tp_links`. `profile` may be null (all roofline). When `sources` is not null, the counts of
// this chunk's op costs by source are added to it.
ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const calibration::Profile* profile, CostSources* sources,
                     const ExpertParallelLinks& ep_links = {},
                     const ContextParallelLinks& cp_links = {});

// One expert-parallel all-to-all in which each GPU holds `bytes_per_gpu`: of them (ep-1)/ep go
// to the other GPUs of the group (balanced routing), so latency + (ep-1)/ep * bytes / bandwidth.
// 0 for ep = 1.
double ep_all_to_all_seconds(double bytes_per_gpu, int ep, const ExpertParallelLinks& links);

// Bytes one GPU holds in each of a MoE layer's all-to-alls, one microbatch: its tokens (b*s, or
// b*s/tp with sequence parallelism) times top-k rows of h activation elements.
double ep_all_to_all_bytes(const TransformerConfig& model, const ParallelPlan& plan);

// Static memory (weights, gradients, optimizer state) on one GPU, sharded by the plan's ZeRO
// stage (ParallelPlan::effective_zero_stage; Rajbhandari et al., SC'20, section 5): stage >= 1
// divides the optimizer state, stage >= 2 also the gradients, stage 3 also the weights by the
// data-parallel size, dp x cp for dense parameters and dp x cp / ep for routed-expert ones.
struct StaticMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double total() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
};
// `layout`: bytes per parameter of each static tensor; without it Megatron-LM's layout for the
// plan's precision (bytes_per_param in models/precision.hpp). ZeRO's paper keeps fp16 gradients
// ({2, 2, 12}; its K = 12). Throws PlanError when check_data_parallel_sharding does.
StaticMemory static_memory(double dense_params, double expert_params, const ParallelPlan& plan,
                           const BytesPerParam& layout);
StaticMemory static_memory(double dense_params, double expert_params, const ParallelPlan& plan);
// All parameters dense (sharded over dp).
StaticMemory static_memory(double params, const ParallelPlan& plan);

// Model FLOPs of one training iteration (forward + backward, no recompute), summed over all
// layers (dense first layers as dense), the LM head and the multi-token prediction depths, all
// microbatches and all replicas: the numerator of MFU. A MoE layer counts the FLOPs its tokens
// do (router, top-k experts, shared expert), i.e. active parameters.
double model_flops_per_iteration(const TransformerConfig& model, const ParallelPlan& plan);

// Activation bytes one transformer layer keeps alive for backward, per microbatch on one GPU of
// the tensor-parallel group: Korthikanti et al. 2022, Table 2, for the plan's recompute mode;
// for a MoE layer the MLP's part is replaced by moe_activation_bytes.
double layer_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan);

// What the layer being recomputed re-materializes during its backward, on top of the stored
// activations, per microbatch on one GPU: with full recompute its whole activations (no
// recompute) but the stored layer input; with selective recompute its attention core's tensors
// (softmax output, dropout mask and output: 5as^2b/t without FlashAttention). 0 without
// recompute. Korthikanti et al. 2022: peak = stored inputs + one layer's full activations.
double layer_recompute_transient_bytes(const TransformerConfig& model, const ParallelPlan& plan);

// What a MoE block keeps for backward besides its input (routing probabilities and map,
// permuted expert inputs, expert intermediates and outputs, shared-expert intermediates), per
// microbatch on one GPU, without recompute; see activation_memory.cpp for the derivation.
double moe_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan);

// What multi-head latent attention keeps for backward between its down-projections' input and
// its output projection (latents and their norms, Q, K, V, the context), per microbatch on one
// GPU; see activation_memory.cpp.
double latent_attention_projection_bytes(const TransformerConfig& model, const ParallelPlan& plan);

}  // namespace hetsim

#pragma once
// What one model chunk (a contiguous run of layers, plus the embedding on the first virtual
// stage and the LM head on the last) costs one GPU of its tensor-parallel group for one
// microbatch: op times on that GPU type, tensor-parallel collective time on the node's links,
// activation bytes kept from F to B, and the static memory of its parameters.
#include "models/calibration/profile.hpp"
#include "models/gpu_catalog.hpp"
#include "models/op_cost.hpp"
#include "models/parallel_plan.hpp"
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

struct ChunkCost {
  // Seconds on one GPU, tensor-parallel collectives included. An unsplit backward (B) takes
  // backward_input_s + backward_weight_s + recompute_s; when B and W are split, B takes
  // backward_input_s + recompute_s and W takes backward_weight_s.
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  double recompute_s = 0;
  double tp_comm_forward_s = 0;   // part of forward_s spent in TP collectives
  double tp_comm_backward_s = 0;  // part of backward_input_s spent in TP collectives
  // FLOPs on one GPU: model FLOPs (no recompute) and the recompute FLOPs on top.
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  double recompute_flops = 0;
  // Bytes on one GPU.
  double activation_bytes = 0;        // allocated at F, freed at B (unsplit) or W (split)
  double weight_grad_bytes = 0;       // GEMM inputs W still reads after B (freed at W); see models/README.md
  double output_bytes = 0;            // the activation tensor sent to the next stage (whole)
  double params = 0;                  // parameters held by one GPU for this chunk
  double optimizer_step_s = 0;        // Adam step over those parameters
};

// Every op costed by the roofline (models/roofline.hpp) and every TP collective by the ring
// formula (models/tp_collectives.hpp): cost_chunk with no profile.
ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links);

// Ops costed from `profile` (measured on `gpu`'s type, in plan.dtype) where it has them, from the
// roofline where it lacks them (models/op_cost.hpp says which lookup each op class uses); TP
// collectives from the profile's measured collectives where it has them, else the ring formula
// on `tp_links`. `profile` may be null (all roofline). When `sources` is not null, the counts of
// this chunk's op costs by source are added to it.
ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const calibration::Profile* profile, CostSources* sources);

// Static memory (weights, gradients, optimizer state) of `params` parameters on one GPU, with
// Megatron-LM's mixed-precision layout: bf16/fp16 weights, fp32 gradient accumulation, fp32
// master weights and two Adam moments; the optimizer part sharded over dp with the distributed
// optimizer.
struct StaticMemory {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double total() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
};
StaticMemory static_memory(double params, const ParallelPlan& plan);

// Model FLOPs of one training iteration (forward + backward, no recompute), summed over all
// layers, the LM head, all microbatches and all replicas: the numerator of MFU.
double model_flops_per_iteration(const TransformerConfig& model, const ParallelPlan& plan);

// Activation bytes one transformer layer keeps alive for backward, per microbatch on one GPU of
// the tensor-parallel group: Korthikanti et al. 2022, Table 2, for the plan's recompute mode.
double layer_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan);

}  // namespace hetsim

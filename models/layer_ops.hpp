#pragma once
// The operators of one transformer layer, of the input embedding and of the LM head, with the
// FLOPs and HBM bytes of each for one microbatch on one GPU of the tensor-parallel group:
// forward, backward-input (dgrad GEMMs + elementwise backward) and backward-weight (wgrad GEMMs),
// so a schedule can split B and W. Shapes follow Megatron-LM's tensor parallelism: QKV and MLP-up
// are column-parallel, attention output and MLP-down row-parallel; with sequence parallelism the
// norms, dropouts and residual adds work on s/t of the tokens. A MoE layer replaces the MLP by a
// router, the permuted tokens through the GPU's local experts (grouped GEMMs, expert width / tp)
// and the shared expert, if any. Multi-head latent attention (DeepSeek-V2/V3) replaces the QKV
// GEMM by its duplicated down-projections, latent norms and head-split up-projections.
#include <string>
#include <vector>

#include "models/parallel_plan.hpp"
#include "models/roofline.hpp"
#include "models/transformer_config.hpp"

namespace hetsim {

// The op classes a measured calibration profile is looked up by (models/op_cost.hpp).
enum class OpClass {
  kGemm,         // a linear layer: forward, dgrad and wgrad GEMMs looked up by shape
  kAttention,    // the attention core: the flash kernel, or QK^T, softmax and PV unfused
  kMemoryBound,  // norms, activations, residual adds, dropout, embedding, cross entropy
};

// Y[m,n] = X[m,k] W[k,n] on one GPU (k or n already divided by tp).
struct GemmShape {
  double m = 0, n = 0, k = 0;
};

// The attention core on one GPU: heads = query heads / tp. Causal (decoder-only models).
// With context parallelism a GPU runs `share` = 1/cp of the causal attention over the whole
// sequence `seq` (load-balanced chunks, models/context_parallel.hpp).
struct AttentionShape {
  double batch = 0, heads = 0, seq = 0, head_dim = 0;
  double share = 1;
};

struct LayerOp {
  std::string name;
  KernelKind kind = KernelKind::kElementwise;  // the roofline's efficiency curve
  OpClass op_class = OpClass::kMemoryBound;    // what a profile looks it up by
  KernelWork forward;
  KernelWork backward_input;
  KernelWork backward_weight;
  bool attention_core = false;  // recomputed in backward under selective recompute
  GemmShape gemm;               // kGemm: the forward GEMM's shape
  double weights = 0;           // the parameters whose gradient the wgrad computes (linear layers)
  AttentionShape attention;     // kAttention
  // kMemoryBound: the profile's kernel kinds this op may be costed as, first found wins
  // ("rmsnorm", "add", "silu_mul", ...; models/calibration/README.md). Empty: roofline only.
  std::vector<std::string> profile_kinds;
};

// Token rows the experts of one GPU process in a MoE layer, one microbatch: with balanced routing
// an expert-parallel group of ep GPUs receives ep * b*s*k rows and each GPU takes 1/ep of them;
// with expert tensor parallelism = tp (Megatron-core's default) every GPU of the TP group runs
// all its rows on 1/tp of each expert's width. So b*s*k, whatever tp and ep.
double moe_routed_rows(const TransformerConfig& model, const ParallelPlan& plan);

// Bytes of one stored activation element (bf16/fp16: 2; fp32/tf32: 4; fp8 training keeps bf16
// activations: 2) and of one GEMM operand element (fp8: 1).
double activation_element_bytes(Dtype dtype);
double gemm_element_bytes(Dtype dtype);

// A linear layer Y[m,n] = X[m,k] W[k,n]: forward, dgrad dX = dY W^T, wgrad dW = X^T dY, each
// 2mkn FLOPs (shapes: forward (m, n, k), dgrad (m, k, n), wgrad (k, n, m)). wgrad accumulates
// into an fp32 main-grad buffer (Megatron's gradient-accumulation fusion), read and written: 8
// bytes per weight; the layer-op lists undo that for plans without the fusion.
LayerOp linear_op(std::string name, double m, double k, double n, double element_bytes);

// A memory-bound kernel that reads `read` and writes `written` elements forward and reads
// `read_back`, writes `written_back` elements in backward (all of `element_bytes`), plus
// `extra_forward_bytes` / `extra_backward_bytes` (masks, fp32 buffers).
LayerOp memory_op(std::string name, KernelKind kind, double read, double written, double read_back,
                  double written_back, double element_bytes, double extra_forward_bytes = 0,
                  double extra_backward_bytes = 0);

std::vector<LayerOp> transformer_layer_ops(const TransformerConfig& model, const ParallelPlan& plan);
std::vector<LayerOp> embedding_ops(const TransformerConfig& model, const ParallelPlan& plan);
std::vector<LayerOp> lm_head_ops(const TransformerConfig& model, const ParallelPlan& plan);
// What one multi-token prediction depth adds before its transformer layer (Megatron-core's
// MultiTokenPredictionLayer): the next tokens' embedding lookup, the embedding and hidden-state
// RMSNorms, their concatenation and the 2h -> h projection (column-parallel). Its transformer
// layer is transformer_layer_ops, its head and loss lm_head_ops.
std::vector<LayerOp> mtp_input_ops(const TransformerConfig& model, const ParallelPlan& plan);

// Activation bytes of the first stage's embedding (dropout mask) and of the last stage's output
// layer (final-norm and LM-head inputs, fp32 logits of the cross entropy), Korthikanti et al.
// 2022, section 4.3.
double embedding_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan);
double lm_head_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan);
// What mtp_input_ops keep for backward, one depth: the two norms' inputs and the projection's
// input (the concatenated [b*s, 2h], sharded with SP).
double mtp_input_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan);

// Of a layer's stored activations, the GEMM inputs: what the weight-gradient pass (W) still
// reads after the input-gradient pass (B), one microbatch on one GPU.
double layer_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan);
double lm_head_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan);
double mtp_input_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan);

}  // namespace hetsim

// Activation bytes one transformer layer keeps from forward to backward, counted tensor by
// tensor after Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", section 4 and Table 2. For a GPT-3-style layer (MHA, 4h GeLU MLP, dropout, 2-byte
// activations) the sum is exactly the paper's
//   no parallelism  sbh(34 + 5as/h)
//   TP              sbh(10 + 24/t + 5as/(ht))
//   TP + SP         sbh(34/t + 5as/(ht))
//   selective       the 5as/h terms dropped
//   full            2sbh (2sbh/t with SP)
// and the same components give GQA (smaller K, V), SwiGLU (two MLP intermediates), models
// without dropout (no masks, no dropout output) and FlashAttention (no s^2 tensors). A MoE
// layer's expert part is counted by moe_activation_bytes, multi-head latent attention's tensors by
// latent_attention_projection_bytes (below). With context parallelism s is
// a GPU's s/cp tokens (Korthikanti's formulas with s/cp; the attention scores of its queries span
// every key), so every term divides by cp.
#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"

namespace hetsim {

double layer_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const double b = plan.micro_batch_size;
  // Context parallelism: every tensor holds this GPU's s/cp tokens of the sequence.
  const double s = plan.local_seq_length();
  const double h = model.hidden_size;
  const double t = plan.tp;
  const double e = activation_element_bytes(plan.dtype);
  const double sbh = s * b * h;
  // Tensors in the norm/dropout region are replicated over TP without SP, sharded with it.
  const double region = plan.sequence_parallel ? 1.0 / t : 1.0;

  if (plan.recompute == Recompute::kFull) return e * sbh * region;  // the layer input only

  const double mask = model.has_dropout ? 1.0 : 0.0;  // dropout masks: 1 byte per element
  double bytes = 0;
  // Attention block.
  bytes += e * sbh * region;                  // input-norm input
  bytes += e * sbh * region;                  // QKV (MLA: down-projection) GEMM input
  if (model.is_mla()) {
    bytes += latent_attention_projection_bytes(model, plan);
  } else {
    const double kv_ratio = static_cast<double>(model.num_kv_heads) / model.num_heads;
    const double sbq = s * b * model.num_heads * model.head_dim();  // Q or context elements
    bytes += e * sbq / t;                     // Q (for QK^T)
    bytes += 2 * e * sbq * kv_ratio / t;      // K and V
    bytes += e * sbq / t;                     // attention-output GEMM input (context)
  }
  bytes += mask * sbh * region;               // post-attention dropout mask
  if (plan.recompute == Recompute::kNone) {
    const double a = model.num_heads;
    // Score elements per GPU: the local queries against the keys of the whole sequence.
    const double scores = a * s * model.attended_keys(plan.seq_length) * b / t;
    if (plan.flash_attention) {
      bytes += 4.0 * a * s * b / t;           // fp32 row log-sum-exp kept by the fused kernel
    } else {
      bytes += e * scores;                    // softmax output
      bytes += mask * scores;                 // attention dropout mask
      bytes += mask * e * scores;             // attention dropout output (input of P V)
    }
  }
  // MLP block.
  const double intermediates = model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0;  // gate and up
  // Post-attention norm input; with a parallel residual it is the layer input, kept above.
  if (!model.parallel_residual) bytes += e * sbh * region;
  bytes += e * sbh * region;                  // MLP-up GEMM input (MoE: router input)
  if (model.is_moe()) {
    bytes += moe_activation_bytes(model, plan);
  } else {
    const double sbf = s * b * model.ffn_hidden_size;
    bytes += intermediates * e * sbf / t;     // activation-function input(s)
    bytes += e * sbf / t;                     // MLP-down GEMM input
  }
  bytes += mask * sbh * region;               // post-MLP dropout mask
  return bytes;
}

// MLA's tensors between the down-projections' input and the output projection, each one a
// backward kernel reads (Megatron-core's MLASelfAttention; the ops of models/layer_ops.cpp):
//  - the query latent (q-latent RMSNorm input) and its normalized copy (q up-projection input),
//    b*s x q_lora_rank each, on the sequence-parallel shard (the up-projection keeps its
//    input sharded and gathers it again in backward, as the QKV GEMM's input with SP);
//  - the key/value latent and its normalized copy, b*s x kv_lora_rank each, likewise; the
//    shared RoPE key is not kept (RoPE's backward rotates the gradient back, reading nothing);
//  - Q and K, heads/t x (qk_nope + qk_rope) per token, and V, heads/t x v_head (the attention
//    core's inputs), and the context, heads/t x v_head (the output projection's input).
// No query latent (q_lora_rank 0): the query projection reads the norm output kept above.
double latent_attention_projection_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const double sb = static_cast<double>(plan.micro_batch_size) * plan.local_seq_length();
  const double t = plan.tp;
  const double e = activation_element_bytes(plan.dtype);
  const double region = plan.sequence_parallel ? 1.0 / t : 1.0;
  const double heads = model.num_heads;
  const LatentAttention& a = model.mla;
  double bytes = 2 * e * sb * (a.q_lora_rank + a.kv_lora_rank) * region;  // latents, normed
  bytes += 2 * e * sb * heads * model.query_key_head_dim() / t;            // Q, K
  bytes += 2 * e * sb * heads * model.value_head_dim() / t;                // V, context
  return bytes;
}

double layer_recompute_transient_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  if (plan.recompute == Recompute::kNone) return 0.0;
  ParallelPlan whole = plan;
  whole.recompute = Recompute::kNone;
  // Full recompute keeps the layer input (layer_activation_bytes for kFull), which the
  // recomputed layer reads in place; selective keeps all but the attention core's tensors.
  return layer_activation_bytes(model, whole) - layer_activation_bytes(model, plan);
}

// What a MoE block keeps for backward beyond its input (counted with the dense MLP-up input
// above), derived here from the ops of models/layer_ops.cpp, not taken from a paper: each
// tensor is one that a backward kernel reads.
//  - routing probabilities, [tokens, E] in the activation dtype: the softmax backward needs
//    its output, and the un-permute's backward its weights; the logits themselves are not kept;
//  - the routing map, 1 byte per [token, expert] (Megatron-core keeps a boolean map) to
//    un-permute the gradients;
//  - the permuted expert inputs, b*s*k rows of h: the experts' up-GEMM wgrad input; every GPU
//    of the TP group holds all of them (expert tensor parallelism splits the width, not rows);
//  - the expert intermediates, b*s*k rows of f_e/t: activation input(s) and down-GEMM input, as
//    a dense MLP of k times the tokens;
//  - the expert outputs, b*s*k rows of h: the un-permute's backward multiplies the output
//    gradient by them for the probability gradient;
//  - the shared expert's intermediates, b*s rows of f_s/t, as a dense MLP (its input is the
//    router's). Qwen2-MoE's shared-expert gate output (b*s values) is left out, < 1/h of it.
// Router and routing map run on the sequence-parallel shard of the tokens (b*s/t with SP).
double moe_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const double tokens = static_cast<double>(plan.micro_batch_size) * plan.local_seq_length();
  const double router_tokens = plan.sequence_parallel ? tokens / plan.tp : tokens;
  const double rows = moe_routed_rows(model, plan);
  const double h = model.hidden_size;
  const double t = plan.tp;
  const double e = activation_element_bytes(plan.dtype);
  const double intermediates = model.mlp == MlpKind::kSwiGlu ? 2.0 : 1.0;
  double bytes = 0;
  bytes += e * router_tokens * model.num_experts;                // routing probabilities
  bytes += router_tokens * model.num_experts;                    // routing map
  bytes += e * rows * h;                                         // permuted expert inputs
  bytes += (intermediates + 1) * e * rows * model.expert_ffn_hidden_size / t;  // intermediates
  bytes += e * rows * h;                                         // expert outputs
  bytes += (intermediates + 1) * e * tokens * model.shared_expert_ffn_hidden_size / t;
  return bytes;
}

}  // namespace hetsim

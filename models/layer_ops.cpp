#include "models/layer_ops.hpp"

namespace hetsim {

double activation_element_bytes(Dtype dtype) {
  return dtype == Dtype::kFp32 || dtype == Dtype::kTf32 ? 4.0 : 2.0;
}

double gemm_element_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::kFp32:
    case Dtype::kTf32: return 4.0;
    case Dtype::kFp8: return 1.0;
    default: return 2.0;
  }
}

double moe_routed_rows(const TransformerConfig& model, const ParallelPlan& plan) {
  return static_cast<double>(plan.micro_batch_size) * plan.local_seq_length() * model.experts_per_token;
}

namespace {
// What a fused wgrad does to each weight's fp32 main grad: reads and writes it.
constexpr double kFusedAccumulateBytes = 8.0;
}  // namespace

LayerOp linear_op(std::string name, double m, double k, double n, double element_bytes) {
  LayerOp op;
  op.name = std::move(name);
  op.kind = KernelKind::kGemm;
  op.op_class = OpClass::kGemm;
  op.gemm = {m, n, k};
  const double flops = 2.0 * m * k * n;
  op.forward = {flops, element_bytes * (m * k + k * n + m * n)};
  op.backward_input = {flops, element_bytes * (m * n + k * n + m * k)};
  op.backward_weight = {flops, element_bytes * (m * k + m * n) + kFusedAccumulateBytes * k * n};
  op.weights = k * n;
  return op;
}

LayerOp memory_op(std::string name, KernelKind kind, double read, double written, double read_back,
                  double written_back, double element_bytes, double extra_forward_bytes,
                  double extra_backward_bytes) {
  LayerOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.forward = {0.0, element_bytes * (read + written) + extra_forward_bytes};
  op.backward_input = {0.0, element_bytes * (read_back + written_back) + extra_backward_bytes};
  return op;
}

namespace {

// Shapes of one microbatch on one GPU of the tensor-parallel group.
struct Shape {
  double b, s, h, a, kv, d, f, v, t;
  double out;  // the output head's width: the vocabulary, or a classifier's labels
  double dk, dv;     // query/key and value head widths: d, or MLA's qk_nope + qk_rope and v
  double keys;       // keys each query attends to: the whole sequence, or the sliding window
  double cp;         // context-parallel size: s above is this GPU's seq_length / cp tokens
  double tokens;     // b*s: rows of the attention and dense-MLP GEMMs
  double seq_tokens; // tokens in the sequence-parallel region (b*s/t with SP, else b*s)
  double e;          // activation element bytes
  double ge;         // GEMM operand element bytes
  // MoE: experts, top-k, expert and shared-expert widths, experts held by this GPU (E / ep),
  // and the routed rows this GPU's experts process (b*s*k; see moe_routed_rows).
  double experts, k, fe, fs, local_experts, routed_rows;
};

Shape shape_of(const TransformerConfig& m, const ParallelPlan& p) {
  Shape x{};
  x.b = p.micro_batch_size;
  x.s = p.local_seq_length();
  x.h = m.hidden_size;
  x.a = m.num_heads;
  x.kv = m.num_kv_heads;
  x.d = m.head_dim();
  x.dk = m.query_key_head_dim();
  x.dv = m.value_head_dim();
  x.f = m.ffn_hidden_size;
  x.v = m.vocab_size;
  x.out = m.output_width();
  x.t = p.tp;
  // Context parallelism: the local queries attend to keys of the whole sequence.
  x.keys = m.attended_keys(p.seq_length);
  x.cp = p.cp;
  x.tokens = x.b * x.s;
  x.seq_tokens = p.sequence_parallel ? x.tokens / x.t : x.tokens;
  x.e = activation_element_bytes(p.dtype);
  x.ge = gemm_element_bytes(p.dtype);
  x.experts = m.num_experts;
  x.k = m.experts_per_token;
  x.fe = m.expert_ffn_hidden_size;
  x.fs = m.shared_expert_ffn_hidden_size;
  x.local_experts = x.experts / p.ep;
  x.routed_rows = moe_routed_rows(m, p);
  return x;
}

// A norm: forward reads x and writes y; backward reads dy and x, writes dx (the scale/shift
// gradients are reduced inside the same kernel).
LayerOp norm_op(std::string name, NormKind norm, double elements, double e) {
  LayerOp op = memory_op(std::move(name), KernelKind::kNorm, elements, elements, 2 * elements, elements, e);
  op.profile_kinds = {norm == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"};
  return op;
}

// Dropout: forward reads x, writes y and a 1-byte mask; backward reads dy and the mask, writes dx.
LayerOp dropout_op(std::string name, double elements, double e) {
  LayerOp op = memory_op(std::move(name), KernelKind::kElementwise, elements, elements, elements,
                         elements, e, elements, elements);
  op.profile_kinds = {"dropout"};
  return op;
}

// Residual add: forward reads two, writes one; backward adds the branch gradient into the
// residual-stream gradient (reads two, writes one).
LayerOp residual_op(std::string name, double elements, double e) {
  LayerOp op = memory_op(std::move(name), KernelKind::kElementwise, 2 * elements, elements,
                         2 * elements, elements, e);
  op.profile_kinds = {"add"};
  return op;
}

// Dropout on a branch output fused with the residual add, as Megatron-LM runs it (its
// bias_dropout_add fusion, on by default): forward reads the branch and the residual, writes the
// sum and a 1-byte mask; backward reads dy and the mask and writes the branch gradient, then adds
// the branch's way back into the residual-stream gradient (reads two, writes one).
LayerOp dropout_add_op(std::string name, double elements, double e) {
  LayerOp op = memory_op(std::move(name), KernelKind::kElementwise, 2 * elements, elements,
                         3 * elements, 2 * elements, e, elements, elements);
  op.profile_kinds = {"dropout", "add"};
  return op;
}

// The residual connection after a branch: the fused dropout-add with dropout, a plain add without.
LayerOp residual_connection(const std::string& branch, bool dropout, double elements, double e) {
  return dropout ? dropout_add_op(branch + "_dropout_add", elements, e)
                 : residual_op(branch + "_residual_add", elements, e);
}

// GPT-NeoX's parallel residual, x + attention + MLP in one kernel: forward reads three, writes
// one (and with dropout a mask per branch); backward writes each branch's gradient (dy times its
// mask with dropout; dy itself without) and sums the residual-stream gradient from dy and the
// two norms' input gradients (reads three, writes one).
LayerOp parallel_residual_op(bool dropout, double elements, double e) {
  const double masks = dropout ? 2 * elements : 0.0;
  const double branch_read = dropout ? elements : 0.0, branch_written = dropout ? 2 * elements : 0.0;
  LayerOp op = memory_op("parallel_residual_add", KernelKind::kElementwise, 3 * elements, elements,
                         3 * elements + branch_read, elements + branch_written, e, masks, masks);
  op.profile_kinds = {"add"};
  return op;
}

// Multi-head latent attention's projections up to the attention core, as Megatron-core's
// MLASelfAttention runs them. The down-projections (h -> q_lora_rank, h -> kv_lora_rank +
// qk_rope) are duplicated on every TP rank and run on the sequence-parallel shard of the tokens;
// their latents' RMSNorms too; the up-projections (q_lora_rank -> heads (nope + rope),
// kv_lora_rank -> heads (nope + v)) are column-parallel over the heads, on all b*s tokens (the
// latents are gathered over TP first with SP; models/tp_collectives.cpp). Without a query latent
// the query projection is column-parallel from the hidden state.
void add_latent_attention_projections(const TransformerConfig& m, const Shape& x,
                                      std::vector<LayerOp>& ops) {
  const LatentAttention& a = m.mla;
  if (a.q_lora_rank > 0) {
    ops.push_back(linear_op("q_down_proj", x.seq_tokens, x.h, a.q_lora_rank, x.ge));
    ops.push_back(norm_op("q_latent_norm", NormKind::kRmsNorm, x.seq_tokens * a.q_lora_rank, x.e));
    ops.push_back(linear_op("q_up_proj", x.tokens, a.q_lora_rank, x.a * x.dk / x.t, x.ge));
  } else {
    ops.push_back(linear_op("q_proj", x.tokens, x.h, x.a * x.dk / x.t, x.ge));
  }
  ops.push_back(linear_op("kv_down_proj", x.seq_tokens, x.h, a.kv_lora_rank + a.qk_rope_head_dim, x.ge));
  ops.push_back(norm_op("kv_latent_norm", NormKind::kRmsNorm, x.seq_tokens * a.kv_lora_rank, x.e));
  ops.push_back(linear_op("kv_up_proj", x.tokens, a.kv_lora_rank,
                          x.a * (a.qk_nope_head_dim + a.v_head_dim) / x.t, x.ge));
  // RoPE on the queries' rope part and on the key's shared rope part, then the per-head query
  // and key of nope + rope assembled (Megatron-core: apply_rotary_pos_emb, then torch.cat):
  // forward reads the query, the keys' nope parts and the shared rope key, writes Q and K;
  // backward reads dQ and dK, writes the gradients of what it read (the shared key's summed
  // over the heads).
  const double qk = x.tokens * x.a * x.dk / x.t;
  const double read = qk + x.tokens * x.a * a.qk_nope_head_dim / x.t + x.tokens * a.qk_rope_head_dim;
  LayerOp rope = memory_op("mla_rope", KernelKind::kElementwise, read, 2 * qk, 2 * qk, read, x.e);
  rope.profile_kinds = {"rope"};
  ops.push_back(rope);
}

void add_attention_core(const Shape& x, bool flash, bool dropout, std::vector<LayerOp>& ops) {
  // Per GPU: a/t query heads, kv/t key/value heads; queries and keys dk wide, values dv (both
  // d without MLA). The score and context matmuls count the
  // full s x s square (Narayanan et al. 2021 count it so; no causal halving), s x w with a
  // sliding window w < s. With context parallelism s is the GPU's s/cp queries against the
  // keys of the whole sequence: 1/cp of the whole square, which causal load balancing makes
  // each rank's share of the causal work too (models/context_parallel.hpp).
  const double q = x.tokens * x.a * x.dk / x.t;
  const double k = x.tokens * x.kv * x.dk / x.t;
  const double v = x.tokens * x.kv * x.dv / x.t;
  const double out = x.tokens * x.a * x.dv / x.t;
  // QK^T over the query/key width, PV over the value width (both d without MLA).
  const double scores_flops = 2.0 * x.b * x.s * x.keys * x.a * x.dk / x.t;
  const double context_flops = 2.0 * x.b * x.s * x.keys * x.a * x.dv / x.t;
  const AttentionShape shape{x.b, x.a / x.t, x.s * x.cp, x.dk, 1 / x.cp};
  if (flash) {
    // One fused kernel: reads Q, K, V, writes O and the fp32 row log-sum-exp; backward reads
    // Q, K, V, O, dO, writes dQ, dK, dV. FLOPs: forward QK^T and PV; backward twice that.
    LayerOp op;
    op.name = "flash_attention";
    op.kind = KernelKind::kGemm;
    op.op_class = OpClass::kAttention;
    op.attention = shape;
    op.attention_core = true;
    const double lse = 4.0 * x.b * x.a * x.s / x.t;
    op.forward = {scores_flops + context_flops, x.e * (q + (k + v) + out) + lse};
    op.backward_input = {2 * (scores_flops + context_flops),
                         x.e * (2 * q + 2 * (k + v) + 2 * out) + lse};
    ops.push_back(op);
    return;
  }
  const double scores = x.b * x.a * x.s * x.keys / x.t;
  LayerOp qk;
  qk.name = "attention_scores";  // S = Q K^T
  qk.kind = KernelKind::kGemm;
  qk.op_class = OpClass::kAttention;
  qk.attention = shape;
  qk.attention_core = true;
  qk.forward = {scores_flops, x.e * (q + k + scores)};
  qk.backward_input = {2 * scores_flops, x.e * (2 * scores + 2 * q + 2 * k)};  // dQ = dS K, dK = dS^T Q
  ops.push_back(qk);
  // Megatron's fused scaled masked softmax and torch's dropout on the probabilities, each a pass
  // over the s x s scores on their own efficiency curve (score_elementwise).
  LayerOp softmax = memory_op("softmax", KernelKind::kScoreElementwise, scores, scores, 2 * scores, scores, x.e);
  softmax.op_class = OpClass::kAttention;  // measured with QK^T and PV as one attention core
  softmax.attention = shape;
  softmax.attention_core = true;
  ops.push_back(softmax);
  if (dropout) {
    LayerOp drop = dropout_op("attention_dropout", scores, x.e);
    drop.kind = KernelKind::kScoreElementwise;
    drop.attention_core = true;
    ops.push_back(drop);
  }
  LayerOp pv;
  pv.name = "attention_context";  // O = P V
  pv.kind = KernelKind::kGemm;
  pv.op_class = OpClass::kAttention;
  pv.attention = shape;
  pv.attention_core = true;
  pv.forward = {context_flops, x.e * (scores + v + out)};
  pv.backward_input = {2 * context_flops, x.e * (out + v + scores + scores + out + v)};  // dP, dV
  ops.push_back(pv);
}

// The GEMMs of `groups` experts run as one grouped GEMM over `m` rows in all: FLOPs as one
// [m, k] x [k, n] GEMM, with every group's weights read (forward, dgrad) and its fp32 main grads
// read and written (wgrad).
LayerOp grouped_linear_op(std::string name, double m, double k, double n, double groups,
                          double element_bytes) {
  LayerOp op = linear_op(std::move(name), m, k, n, element_bytes);
  const double more_weights = (groups - 1) * k * n;
  op.forward.bytes += element_bytes * more_weights;
  op.backward_input.bytes += element_bytes * more_weights;
  op.backward_weight.bytes += kFusedAccumulateBytes * more_weights;
  op.weights += more_weights;
  return op;
}

// Without gradient-accumulation fusion (Megatron-LM before 2022, or
// --no-gradient-accumulation-fusion) each wgrad GEMM writes its weight gradient in the training
// dtype instead of updating the main grad, and one more kernel per weight adds it in every
// microbatch (Megatron's DDP gradient hook, main_grad.add_(grad); autograd's AccumulateGrad in
// place where gradients stay in the model's dtype): reads the main grad and the new gradient,
// writes the main grad.
void unfuse_gradient_accumulation(const ParallelPlan& plan, std::vector<LayerOp>& ops) {
  if (plan.gradient_accumulation_fusion) return;
  const double e = activation_element_bytes(plan.dtype);
  const double main_grad = plan.grads_in_fp32() ? 4.0 : e;
  std::vector<LayerOp> unfused;
  unfused.reserve(2 * ops.size());
  for (LayerOp& op : ops) {
    const double weights = op.weights;
    if (weights > 0) op.backward_weight.bytes -= (kFusedAccumulateBytes - e) * weights;
    unfused.push_back(std::move(op));
    if (!(weights > 0)) continue;
    LayerOp add;
    add.name = unfused.back().name + "_grad_accumulate";
    add.backward_weight = {0.0, (2 * main_grad + e) * weights};
    add.profile_kinds = {"add"};
    unfused.push_back(std::move(add));
  }
  ops = std::move(unfused);
}

// An MLP of width `ffn` (per GPU, already divided by tp) over `rows` token rows: gate-and-up
// (SwiGLU) or up GEMM, the activation, the down GEMM; `groups` > 1 for the grouped GEMMs of the
// local experts. Names are `prefix` + "_gate_up_proj" etc.; the activation is `act_prefix` +
// "swiglu" / "gelu".
void add_mlp(const std::string& prefix, const std::string& act_prefix, const Shape& x, MlpKind mlp,
             double rows, double ffn, double groups, std::vector<LayerOp>& ops) {
  const double inter = rows * ffn;  // elements of one intermediate tensor
  if (mlp == MlpKind::kSwiGlu) {
    ops.push_back(grouped_linear_op(prefix + "_gate_up_proj", rows, x.h, 2 * ffn, groups, x.ge));
    // silu(gate) * up: reads gate and up, writes one; backward reads dy, gate, up, writes both
    // grads. Profiles name this fused kernel "silu_mul"; a plain "silu" curve (same bytes-to-time
    // behaviour of a one-pass elementwise kernel) stands in where only that was measured.
    LayerOp swiglu = memory_op(act_prefix + "swiglu", KernelKind::kElementwise, 2 * inter, inter,
                               3 * inter, 2 * inter, x.e);
    swiglu.profile_kinds = {"silu_mul", "silu"};
    ops.push_back(swiglu);
  } else {
    ops.push_back(grouped_linear_op(prefix + "_up_proj", rows, x.h, ffn, groups, x.ge));
    LayerOp gelu = memory_op(act_prefix + "gelu", KernelKind::kElementwise, inter, inter,
                             2 * inter, inter, x.e);
    gelu.profile_kinds = {"gelu"};
    ops.push_back(gelu);
  }
  ops.push_back(grouped_linear_op(prefix + "_down_proj", rows, ffn, x.h, groups, x.ge));
}

// A MoE block in place of the MLP (Megatron-core's MoELayer): router, permutation into expert
// order, the local experts' grouped GEMMs, un-permutation weighted by the routing
// probabilities, and the shared expert. The expert-parallel all-to-alls and the TP collectives
// are costed with the chunk (models/chunk_cost.cpp). The shared expert's sigmoid gate multiply
// and its add to the routed output are taken as fused into neighbouring kernels, as bias adds are.
void add_moe(const Shape& x, MlpKind mlp, bool shared_gate, std::vector<LayerOp>& ops) {
  // The router's weights are replicated over TP; it runs on the tokens of the sequence-parallel
  // region (all b*s without SP).
  ops.push_back(linear_op("moe_router", x.seq_tokens, x.h, x.experts, x.ge));
  // Softmax and top-k: read logits, write probabilities and a 1-byte [tokens, experts] routing
  // map; backward reads the probabilities and their gradient, writes the logit gradient.
  const double logits = x.seq_tokens * x.experts;
  ops.push_back(memory_op("moe_router_softmax_topk", KernelKind::kElementwise, logits, logits,
                          2 * logits, logits, x.e, logits, 0));
  // Permute: each token row copied once per chosen expert, in expert order; backward sums the
  // k row gradients back into one.
  const double rows_h = x.routed_rows * x.h;
  const double tokens_h = x.tokens * x.h;
  ops.push_back(memory_op("moe_permute", KernelKind::kElementwise, tokens_h, rows_h, rows_h,
                          tokens_h, x.e));
  add_mlp("expert", "expert_", x, mlp, x.routed_rows, x.fe / x.t, x.local_experts, ops);
  // Un-permute: the k expert outputs of a token weighted by its probabilities and summed;
  // backward reads the output gradient and the expert outputs (for the probability gradient),
  // writes the row and probability gradients.
  ops.push_back(memory_op("moe_unpermute", KernelKind::kElementwise, rows_h + x.routed_rows,
                          tokens_h, tokens_h + rows_h, rows_h + x.routed_rows, x.e));
  if (x.fs > 0) {
    add_mlp("shared_expert", "shared_expert_", x, mlp, x.tokens, x.fs / x.t, 1, ops);
    if (shared_gate) ops.push_back(linear_op("shared_expert_gate", x.seq_tokens, x.h, 1, x.ge));
  }
}

}  // namespace

std::vector<LayerOp> transformer_layer_ops(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  const double seq_h = x.seq_tokens * x.h;
  const bool dropout = model.has_dropout;
  std::vector<LayerOp> ops;
  ops.push_back(norm_op("input_norm", model.norm, seq_h, x.e));
  if (model.is_mla()) {
    add_latent_attention_projections(model, x, ops);
  } else {
    ops.push_back(linear_op("qkv_proj", x.tokens, x.h, (x.a + 2 * x.kv) * x.d / x.t, x.ge));
  }
  add_attention_core(x, plan.flash_attention, dropout, ops);
  ops.push_back(linear_op("attention_out_proj", x.tokens, x.a * x.dv / x.t, x.h, x.ge));
  if (!model.parallel_residual) ops.push_back(residual_connection("attention", dropout, seq_h, x.e));
  ops.push_back(norm_op("post_attention_norm", model.norm, seq_h, x.e));
  if (model.is_moe()) {
    add_moe(x, model.mlp, model.shared_expert_gate, ops);
  } else {
    add_mlp("mlp", "", x, model.mlp, x.tokens, x.f / x.t, 1, ops);
  }
  if (model.parallel_residual) {
    ops.push_back(parallel_residual_op(dropout, seq_h, x.e));
  } else {
    ops.push_back(residual_connection("mlp", dropout, seq_h, x.e));
  }
  unfuse_gradient_accumulation(plan, ops);
  return ops;
}

std::vector<LayerOp> embedding_ops(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  const double full = x.tokens * x.h;
  std::vector<LayerOp> ops;
  // Vocabulary-parallel lookup: every rank writes the whole [b*s, h] output (zeros for ids it
  // does not own) before the TP reduction; learned positions are read and added on top.
  const double rows_read = model.learned_positions > 0 ? 2 * full : full;
  LayerOp lookup = memory_op("embedding_lookup", KernelKind::kElementwise, rows_read, full, 0, 0, x.e);
  // W, as PyTorch's embedding backward and Megatron's gradient hook run it: a dense gradient of
  // the table in the activation dtype is zero-filled (write e), dY's rows are summed into it
  // (read dY, read and write the rows: 3e per dY element), and the table's fp32 main gradient
  // adds it (read e + 4, write 4): (2e + 4) bytes per table element. Table: the GPU's v/t rows,
  // plus the learned positions' rows (replicated), each with its own pass over dY.
  const double table = (x.v / x.t + model.learned_positions) * x.h;
  const double tables = model.learned_positions > 0 ? 2 : 1;
  lookup.backward_weight = {0.0, (2 * x.e + 4) * table + tables * 3 * x.e * full};
  lookup.profile_kinds = {"embedding"};
  ops.push_back(lookup);
  if (model.has_dropout) ops.push_back(dropout_op("embedding_dropout", x.seq_tokens * x.h, x.e));
  return ops;
}

std::vector<LayerOp> lm_head_ops(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  std::vector<LayerOp> ops;
  ops.push_back(norm_op("final_norm", model.norm, x.seq_tokens * x.h, x.e));
  ops.push_back(linear_op("lm_head", x.tokens, x.h, x.out / x.t, x.ge));
  // Megatron's vocabulary-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py),
  // pass by pass over the GPU's [b*s, v/t] logits: cast to fp32 (read e, write 4; no pass when
  // the logits are fp32), max (read 4), subtract the max in place (read 4, write 4), exp in place
  // (read 4, write 4), sum (read 4), divide into the fp32 softmax kept for backward (read 4,
  // write 4): 32 B per logit plus the cast. Backward: the softmax less one at the target, scaled
  // by the loss gradient in place (read 4, write 4), cast back to the logits' dtype (read 4,
  // write e).
  const double logits = x.tokens * x.out / x.t;
  const bool cast = x.e != 4.0;
  const double forward_per_logit = 32.0 + (cast ? x.e + 4.0 : 0.0);
  const double backward_per_logit = 8.0 + (cast ? 4.0 + x.e : 0.0);
  LayerOp ce = memory_op("cross_entropy", KernelKind::kElementwise, 0, 0, 0, 0, x.e,
                         forward_per_logit * logits, backward_per_logit * logits);
  ce.profile_kinds = {"cross_entropy"};
  ops.push_back(ce);
  unfuse_gradient_accumulation(plan, ops);
  return ops;
}

std::vector<LayerOp> mtp_input_ops(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  const double seq_h = x.seq_tokens * x.h;
  std::vector<LayerOp> ops;
  for (LayerOp& op : embedding_ops(model, plan)) {
    op.name = "mtp_" + op.name;
    ops.push_back(std::move(op));
  }
  ops.push_back(norm_op("mtp_embedding_norm", model.norm, seq_h, x.e));
  ops.push_back(norm_op("mtp_hidden_norm", model.norm, seq_h, x.e));
  // torch.cat copies both normalized tensors into one [b*s, 2h]; its backward hands out views
  // of the gradient (no kernel). A profile costs it on its one-pass elementwise "add" curve.
  LayerOp concat = memory_op("mtp_concat", KernelKind::kElementwise, 2 * seq_h, 2 * seq_h, 0, 0, x.e);
  concat.profile_kinds = {"add"};
  ops.push_back(concat);
  ops.push_back(linear_op("mtp_eh_proj", x.tokens, 2 * x.h, x.h / x.t, x.ge));
  unfuse_gradient_accumulation(plan, ops);
  return ops;
}

double embedding_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  // Korthikanti section 4.3: the embedding dropout keeps its mask, sbh (sbh/t with SP).
  if (!model.has_dropout) return 0.0;
  const Shape x = shape_of(model, plan);
  return x.seq_tokens * x.h;
}

double lm_head_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  // Korthikanti section 4.3: final-norm input and LM-head input (2sbh each, /t with SP, where
  // Megatron keeps the LM-head input sharded and gathers it again in backward) and the fp32
  // logits of the cross entropy, 4sbv/t.
  const Shape x = shape_of(model, plan);
  const double norm_input = x.e * x.seq_tokens * x.h;
  const double head_input = x.e * x.seq_tokens * x.h;
  const double logits = 4.0 * x.tokens * x.out / x.t;
  return norm_input + head_input + logits;
}

double layer_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  const double seq_h = x.e * x.seq_tokens * x.h;  // QKV and MLP-up inputs (sharded with SP)
  // MLA: the down-projections' one input, then the latents the up-projections read (sharded
  // with SP as the QKV input is; the query latent absent without q_lora_rank, where the query
  // projection reads the hidden state the down-projection does).
  const double attention_input =
      model.is_mla() ? seq_h + x.e * x.seq_tokens * (model.mla.q_lora_rank + model.mla.kv_lora_rank)
                     : seq_h;
  const double out_proj_input = x.e * x.tokens * x.a * x.dv / x.t;
  if (!model.is_moe()) return attention_input + seq_h + out_proj_input + x.e * x.tokens * x.f / x.t;
  // MoE: the router (and shared-expert up) input is the same tensor as a dense MLP-up input;
  // the experts' up input is the permuted rows, their down input the activation output.
  const double expert_up_input = x.e * x.routed_rows * x.h;
  const double expert_down_input = x.e * x.routed_rows * x.fe / x.t;
  const double shared_down_input = x.e * x.tokens * x.fs / x.t;
  return attention_input + seq_h + out_proj_input + expert_up_input + expert_down_input +
         shared_down_input;
}

double mtp_input_activation_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  return x.e * x.seq_tokens * x.h * (1 + 1 + 2);  // embedding-norm, hidden-norm, projection inputs
}

double mtp_input_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  return 2 * x.e * x.seq_tokens * x.h;  // the projection's [b*s, 2h] input
}

double lm_head_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  return x.e * x.seq_tokens * x.h;
}

}  // namespace hetsim

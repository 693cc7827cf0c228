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

LayerOp linear_op(std::string name, double m, double k, double n, double element_bytes) {
  LayerOp op;
  op.name = std::move(name);
  op.kind = KernelKind::kGemm;
  op.op_class = OpClass::kGemm;
  op.gemm = {m, n, k};
  const double flops = 2.0 * m * k * n;
  op.forward = {flops, element_bytes * (m * k + k * n + m * n)};
  op.backward_input = {flops, element_bytes * (m * n + k * n + m * k)};
  op.backward_weight = {flops, element_bytes * (m * k + m * n) + 8.0 * k * n};
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
  double tokens;     // b*s: rows of every GEMM
  double seq_tokens; // tokens in the sequence-parallel region (b*s/t with SP, else b*s)
  double e;          // activation element bytes
  double ge;         // GEMM operand element bytes
};

Shape shape_of(const TransformerConfig& m, const ParallelPlan& p) {
  Shape x{};
  x.b = p.micro_batch_size;
  x.s = p.seq_length;
  x.h = m.hidden_size;
  x.a = m.num_heads;
  x.kv = m.num_kv_heads;
  x.d = m.head_dim();
  x.f = m.ffn_hidden_size;
  x.v = m.vocab_size;
  x.t = p.tp;
  x.tokens = x.b * x.s;
  x.seq_tokens = p.sequence_parallel ? x.tokens / x.t : x.tokens;
  x.e = activation_element_bytes(p.dtype);
  x.ge = gemm_element_bytes(p.dtype);
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

void add_attention_core(const Shape& x, bool flash, bool dropout, std::vector<LayerOp>& ops) {
  // Per GPU: a/t query heads, kv/t key/value heads. The score and context matmuls count the full
  // s x s square (Narayanan et al. 2021 count it so; no causal halving).
  const double q = x.tokens * x.a * x.d / x.t;
  const double kv = x.tokens * x.kv * x.d / x.t;
  const double out = x.tokens * x.h / x.t;
  const double matmul_flops = 2.0 * x.b * x.s * x.s * x.h / x.t;  // each of QK^T and PV
  const AttentionShape shape{x.b, x.a / x.t, x.s, x.d};
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
    op.forward = {2 * matmul_flops, x.e * (q + 2 * kv + out) + lse};
    op.backward_input = {4 * matmul_flops, x.e * (2 * q + 4 * kv + 2 * out) + lse};
    ops.push_back(op);
    return;
  }
  const double scores = x.b * x.a * x.s * x.s / x.t;
  LayerOp qk;
  qk.name = "attention_scores";  // S = Q K^T
  qk.kind = KernelKind::kGemm;
  qk.op_class = OpClass::kAttention;
  qk.attention = shape;
  qk.attention_core = true;
  qk.forward = {matmul_flops, x.e * (q + kv + scores)};
  qk.backward_input = {2 * matmul_flops, x.e * (2 * scores + 2 * q + 2 * kv)};  // dQ = dS K, dK = dS^T Q
  ops.push_back(qk);
  LayerOp softmax = memory_op("softmax", KernelKind::kElementwise, scores, scores, 2 * scores, scores, x.e);
  softmax.op_class = OpClass::kAttention;  // measured with QK^T and PV as one attention core
  softmax.attention = shape;
  softmax.attention_core = true;
  ops.push_back(softmax);
  if (dropout) {
    LayerOp drop = dropout_op("attention_dropout", scores, x.e);
    drop.attention_core = true;
    ops.push_back(drop);
  }
  LayerOp pv;
  pv.name = "attention_context";  // O = P V
  pv.kind = KernelKind::kGemm;
  pv.op_class = OpClass::kAttention;
  pv.attention = shape;
  pv.attention_core = true;
  pv.forward = {matmul_flops, x.e * (scores + kv + out)};
  pv.backward_input = {2 * matmul_flops, x.e * (out + kv + scores + scores + out + kv)};  // dP, dV
  ops.push_back(pv);
}

}  // namespace

std::vector<LayerOp> transformer_layer_ops(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  const double seq_h = x.seq_tokens * x.h;
  const bool dropout = model.has_dropout;
  std::vector<LayerOp> ops;
  ops.push_back(norm_op("input_norm", model.norm, seq_h, x.e));
  ops.push_back(linear_op("qkv_proj", x.tokens, x.h, (x.a + 2 * x.kv) * x.d / x.t, x.ge));
  add_attention_core(x, plan.flash_attention, dropout, ops);
  ops.push_back(linear_op("attention_out_proj", x.tokens, x.a * x.d / x.t, x.h, x.ge));
  if (dropout) ops.push_back(dropout_op("attention_residual_dropout", seq_h, x.e));
  ops.push_back(residual_op("attention_residual_add", seq_h, x.e));
  ops.push_back(norm_op("post_attention_norm", model.norm, seq_h, x.e));
  const double ffn = x.tokens * x.f / x.t;  // elements of one MLP intermediate tensor per GPU
  if (model.mlp == MlpKind::kSwiGlu) {
    ops.push_back(linear_op("mlp_gate_up_proj", x.tokens, x.h, 2 * x.f / x.t, x.ge));
    // silu(gate) * up: reads gate and up, writes one; backward reads dy, gate, up, writes both grads.
    // Profiles name this fused kernel "silu_mul"; a plain "silu" curve (same bytes-to-time
    // behaviour of a one-pass elementwise kernel) stands in where only that was measured.
    LayerOp swiglu = memory_op("swiglu", KernelKind::kElementwise, 2 * ffn, ffn, 3 * ffn, 2 * ffn, x.e);
    swiglu.profile_kinds = {"silu_mul", "silu"};
    ops.push_back(swiglu);
  } else {
    ops.push_back(linear_op("mlp_up_proj", x.tokens, x.h, x.f / x.t, x.ge));
    LayerOp gelu = memory_op("gelu", KernelKind::kElementwise, ffn, ffn, 2 * ffn, ffn, x.e);
    gelu.profile_kinds = {"gelu"};
    ops.push_back(gelu);
  }
  ops.push_back(linear_op("mlp_down_proj", x.tokens, x.f / x.t, x.h, x.ge));
  if (dropout) ops.push_back(dropout_op("mlp_residual_dropout", seq_h, x.e));
  ops.push_back(residual_op("mlp_residual_add", seq_h, x.e));
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
  // W: scatter-add dY into the fp32 main-grad rows (read dY, read+write 4-byte grads).
  lookup.backward_weight = {0.0, x.e * full + 8.0 * full / x.t};
  lookup.profile_kinds = {"embedding"};
  ops.push_back(lookup);
  if (model.has_dropout) ops.push_back(dropout_op("embedding_dropout", x.seq_tokens * x.h, x.e));
  return ops;
}

std::vector<LayerOp> lm_head_ops(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  std::vector<LayerOp> ops;
  ops.push_back(norm_op("final_norm", model.norm, x.seq_tokens * x.h, x.e));
  ops.push_back(linear_op("lm_head", x.tokens, x.h, x.v / x.t, x.ge));
  // Vocabulary-parallel cross entropy (Megatron): logits to fp32, softmax kept for backward;
  // backward reads it and writes the logit gradients.
  const double logits = x.tokens * x.v / x.t;
  LayerOp ce = memory_op("cross_entropy", KernelKind::kElementwise, logits, 0, 0, logits, x.e,
                         4.0 * logits, 4.0 * logits);
  ce.profile_kinds = {"cross_entropy"};
  ops.push_back(ce);
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
  const double logits = 4.0 * x.tokens * x.v / x.t;
  return norm_input + head_input + logits;
}

double layer_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  const double seq_h = x.e * x.seq_tokens * x.h;  // QKV and MLP-up inputs (sharded with SP)
  const double out_proj_input = x.e * x.tokens * x.a * x.d / x.t;
  const double down_input = x.e * x.tokens * x.f / x.t;
  return 2 * seq_h + out_proj_input + down_input;
}

double lm_head_weight_grad_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const Shape x = shape_of(model, plan);
  return x.e * x.seq_tokens * x.h;
}

}  // namespace hetsim

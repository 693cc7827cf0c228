#include "sim/serving/batch_cost.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "base/error.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "models/roofline.hpp"
#include "models/tp_collectives.hpp"

namespace hetsim::serving {

void IterationWork::add_prefill(long chunk, long cached, bool emits_token) {
  prefill_tokens += chunk;
  const double c = static_cast<double>(chunk);
  prefill_attention_pairs += c * static_cast<double>(cached) + c * (c + 1) / 2;
  prefill_key_tokens += static_cast<double>(cached + chunk);
  if (emits_token) ++sampled_tokens;
}

void IterationWork::add_verification(long tokens, long cached) {
  add_prefill(tokens, cached, false);
  sampled_tokens += tokens;
}

void IterationWork::add_decode(long cached) {
  ++decode_tokens;
  decode_key_tokens += static_cast<double>(cached + 1);
  ++sampled_tokens;
}

namespace {

double sum_forward(const std::vector<LayerOp>& ops, const StageHardware& hw, Dtype dtype) {
  double seconds = 0;
  for (const OpCost& cost : cost_ops(ops, *hw.gpu, dtype, hw.profile)) seconds += cost.forward.seconds;
  return seconds;
}

LayerOp norm(const TransformerConfig& model, double elements, double e) {
  LayerOp op = memory_op("norm", KernelKind::kNorm, elements, elements, 0, 0, e);
  op.profile_kinds = {model.norm == NormKind::kRmsNorm ? "rmsnorm" : "layernorm"};
  return op;
}

LayerOp elementwise(const char* name, const char* kind, double read, double written, double e) {
  LayerOp op = memory_op(name, KernelKind::kElementwise, read, written, 0, 0, e);
  op.profile_kinds = {kind};
  return op;
}

}  // namespace

ReplicaCost::ReplicaCost(const TransformerConfig& model, Dtype dtype, int tp,
                         std::vector<StageHardware> stages, std::vector<int> layers_per_stage)
    : model_(&model), dtype_(dtype), tp_(tp), element_bytes_(activation_element_bytes(dtype)),
      stages_(std::move(stages)) {
  if (model.is_moe())
    throw PlanError(fmt::format("serve: {} is a Mixture-of-Experts model; serving costs dense models only",
                                model.name));
  // MLA's decode reads a latent KV cache (kv_lora_rank + qk_rope per token, DeepSeek-V2 section
  // 2.1.2), not heads x head_dim keys and values; its serving costs are not modeled.
  if (model.is_mla())
    throw PlanError(fmt::format("serve: {} uses multi-head latent attention; serving costs standard "
                                "attention only", model.name));
  if (tp < 1 || model.num_heads % tp != 0)
    throw PlanError(fmt::format("serve: tp {} must divide the {} attention heads of {}", tp,
                                model.num_heads, model.name));
  if (model.num_kv_heads % tp != 0 && tp % model.num_kv_heads != 0)
    throw PlanError(fmt::format("serve: tp {} and the {} KV heads of {} must divide one another", tp,
                                model.num_kv_heads, model.name));
  const int pp = static_cast<int>(stages_.size());
  if (pp < 1 || pp > model.num_layers)
    throw PlanError(fmt::format("serve: pp {} must be between 1 and the {} layers of {}", pp,
                                model.num_layers, model.name));
  for (const StageHardware& hw : stages_) {
    if (hw.gpu->peak(dtype) <= 0)
      throw PlanError(fmt::format("serve: {} has no {} GEMMs", hw.gpu->key, to_string(dtype)));
  }
  if (layers_per_stage.empty()) {
    for (int s = 0; s < pp; ++s) layers_per_stage.push_back(model.num_layers / pp + (s < model.num_layers % pp ? 1 : 0));
  }
  set_split(std::move(layers_per_stage));
  layer_cache_.resize(stages_.size());
}

void check_layer_split(const TransformerConfig& model, int stages, const std::vector<int>& layers_per_stage) {
  int sum = 0;
  bool positive = true;
  for (const int n : layers_per_stage) {
    sum += n;
    positive = positive && n >= 1;
  }
  if (static_cast<int>(layers_per_stage.size()) != stages || !positive || sum != model.num_layers)
    throw PlanError(fmt::format("serve: layers per stage {} must give each of the {} stages at least one layer and "
                                "sum to the {} layers of {}",
                                fmt::join(layers_per_stage, ","), stages, model.num_layers, model.name));
}

void ReplicaCost::set_split(std::vector<int> layers_per_stage) {
  check_layer_split(*model_, pp(), layers_per_stage);
  layers_ = std::move(layers_per_stage);
}

double ReplicaCost::layer_token_seconds(int stage, long tokens) const {
  if (tokens <= 0) return 0;
  auto& cache = layer_cache_[stage];
  if (const auto it = cache.find(tokens); it != cache.end()) return it->second;
  const TransformerConfig& m = *model_;
  const StageHardware& hw = stages_[stage];
  const double t = static_cast<double>(tokens), h = m.hidden_size, d = m.head_dim();
  const double e = element_bytes_, ge = gemm_element_bytes(dtype_);
  const double heads = static_cast<double>(m.num_heads) / tp_;
  const double kv_heads = std::ceil(static_cast<double>(m.num_kv_heads) / tp_);
  const double ffn = static_cast<double>(m.ffn_hidden_size) / tp_;
  std::vector<LayerOp> ops;
  ops.push_back(norm(m, t * h, e));
  ops.push_back(linear_op("qkv_proj", t, h, (heads + 2 * kv_heads) * d, ge));
  // Rotary embedding applied in place to Q and K.
  if (m.learned_positions == 0)
    ops.push_back(elementwise("rope", "rope", t * (heads + kv_heads) * d, t * (heads + kv_heads) * d, e));
  ops.push_back(linear_op("attention_out_proj", t, heads * d, h, ge));
  ops.push_back(elementwise("residual_add", "add", 2 * t * h, t * h, e));
  ops.push_back(norm(m, t * h, e));
  if (m.mlp == MlpKind::kSwiGlu) {
    ops.push_back(linear_op("mlp_gate_up_proj", t, h, 2 * ffn, ge));
    ops.push_back(elementwise("swiglu", "silu_mul", 2 * t * ffn, t * ffn, e));
  } else {
    ops.push_back(linear_op("mlp_up_proj", t, h, ffn, ge));
    ops.push_back(elementwise("gelu", "gelu", t * ffn, t * ffn, e));
  }
  ops.push_back(linear_op("mlp_down_proj", t, ffn, h, ge));
  ops.push_back(elementwise("residual_add", "add", 2 * t * h, t * h, e));
  double seconds = sum_forward(ops, hw, dtype_);
  // Row-parallel outputs of attention and MLP are all-reduced (Megatron-style TP, as vLLM runs it).
  seconds += 2 * tp_collective_cost(TpCollective::kAllReduce, t * h * e, tp_, hw.tp_links, hw.profile).seconds;
  cache.emplace(tokens, seconds);
  return seconds;
}

double ReplicaCost::attention_seconds(int stage, long query_tokens, double attended_pairs,
                                      double key_tokens) const {
  const TransformerConfig& m = *model_;
  const double d = m.head_dim();
  const double heads = static_cast<double>(m.num_heads) / tp_;
  const double kv_heads = std::ceil(static_cast<double>(m.num_kv_heads) / tp_);
  const double q = static_cast<double>(query_tokens) * heads * d;
  KernelWork work;
  work.flops = 4.0 * heads * d * attended_pairs;
  work.bytes = element_bytes_ * (2 * q + 2 * key_tokens * kv_heads * d);
  return kernel_time(KernelKind::kGemm, work, *stages_[stage].gpu, dtype_);
}

double ReplicaCost::prefill_attention_seconds(int stage, const IterationWork& w) const {
  if (w.prefill_tokens <= 0) return 0;
  return attention_seconds(stage, w.prefill_tokens, w.prefill_attention_pairs, w.prefill_key_tokens);
}

double ReplicaCost::decode_attention_seconds(int stage, const IterationWork& w) const {
  if (w.decode_tokens <= 0) return 0;
  // Each decode token attends to its whole cached context: pairs = keys read.
  return attention_seconds(stage, w.decode_tokens, w.decode_key_tokens, w.decode_key_tokens);
}

double ReplicaCost::embedding_seconds(int stage, long tokens) const {
  if (tokens <= 0) return 0;
  const StageHardware& hw = stages_[stage];
  const double rows = static_cast<double>(tokens) * model_->hidden_size;
  // Vocabulary-parallel lookup: each rank writes the whole [tokens, h] output, then all-reduce.
  std::vector<LayerOp> ops{elementwise("embedding_lookup", "embedding", rows, rows, element_bytes_)};
  return sum_forward(ops, hw, dtype_) +
         tp_collective_cost(TpCollective::kAllReduce, rows * element_bytes_, tp_, hw.tp_links, hw.profile).seconds;
}

double ReplicaCost::lm_head_seconds(int stage, long tokens, long sampled) const {
  if (tokens <= 0) return 0;
  const StageHardware& hw = stages_[stage];
  const double h = model_->hidden_size;
  const double vocab = static_cast<double>(model_->vocab_size) / tp_;
  std::vector<LayerOp> ops{norm(*model_, static_cast<double>(tokens) * h, element_bytes_)};
  // Only the rows that emit a token go through the LM head (vLLM prunes the others first);
  // the vocabulary-parallel logits are gathered for sampling.
  double seconds = 0;
  if (sampled > 0) {
    const double rows = static_cast<double>(sampled);
    ops.push_back(linear_op("lm_head", rows, h, vocab, gemm_element_bytes(dtype_)));
    seconds += tp_collective_cost(TpCollective::kAllGather, rows * vocab * tp_ * element_bytes_, tp_,
                                  hw.tp_links, hw.profile).seconds;
  }
  return seconds + sum_forward(ops, hw, dtype_);
}

double ReplicaCost::stage_seconds(int stage, const IterationWork& w) const {
  const long tokens = w.tokens();
  if (tokens <= 0) return 0;
  double seconds = layers_[stage] * (layer_token_seconds(stage, tokens) + prefill_attention_seconds(stage, w) +
                                     decode_attention_seconds(stage, w));
  if (stage == 0) seconds += embedding_seconds(stage, tokens);
  if (stage == pp() - 1) seconds += lm_head_seconds(stage, tokens, w.sampled_tokens);
  return seconds;
}

double ReplicaCost::transfer_seconds(int stage, const IterationWork& w) const {
  if (stage >= pp() - 1 || w.tokens() <= 0) return 0;
  const long elements = w.tokens() * model_->hidden_size;
  const double tensor_bytes = static_cast<double>(elements) * element_bytes_;
  const bool sliced = tp_ > 1 && elements % tp_ == 0;
  const StageHardware& hw = stages_[stage];
  const StageHardware& next = stages_[stage + 1];
  const double sent_bytes = sliced ? tensor_bytes / tp_ : tensor_bytes;  // by each TP rank
  double one_tensor = hw.next_latency_s + sent_bytes / hw.next_bandwidth_bytes_per_s;
  if (sliced)
    one_tensor += tp_collective_cost(TpCollective::kAllGather, tensor_bytes, tp_, next.tp_links,
                                     next.profile).seconds;
  return 2 * one_tensor;  // hidden states, then residual
}

double ReplicaCost::iteration_seconds(const IterationWork& w) const {
  double seconds = 0;
  for (int s = 0; s < pp(); ++s) seconds += stage_seconds(s, w) + transfer_seconds(s, w);
  return seconds;
}

}  // namespace hetsim::serving

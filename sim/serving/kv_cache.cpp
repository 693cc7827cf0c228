#include "sim/serving/kv_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.hpp"
#include "models/layer_ops.hpp"

namespace hetsim::serving {

namespace {

// Fills b.blocks from the bytes left after weights and workspace; throws when not one fits.
void count_blocks(KvCacheBudget& b, int block_tokens, const std::string& what) {
  const double free_bytes = b.usable_bytes - b.weights_bytes - b.workspace_bytes;
  const double block_bytes = b.kv_bytes_per_token * block_tokens;
  b.blocks = free_bytes > 0 ? static_cast<long>(std::floor(free_bytes / block_bytes)) : 0;
  if (b.blocks < 1)
    throw PlanError(fmt::format(
        "serve: {} leave no room for the KV cache ({:.2f} GB usable, "
        "{:.2f} GB weights, {:.2f} GB workspace); use more GPUs per replica (--tp, --pp) or fewer "
        "--max-batched-tokens",
        what, b.usable_bytes / 1e9, b.weights_bytes / 1e9, b.workspace_bytes / 1e9));
}

}  // namespace

double kv_bytes_per_token_per_layer(const TransformerConfig& model, Dtype dtype, int tp) {
  const double kv_heads = std::ceil(static_cast<double>(model.num_kv_heads) / tp);
  return 2.0 * kv_heads * model.head_dim() * activation_element_bytes(dtype);
}

double layer_weight_bytes(const TransformerConfig& model, Dtype dtype, int tp) {
  return model.layer_params() / tp * activation_element_bytes(dtype);
}

KvCacheBudget kv_cache_budget(const TransformerConfig& model, Dtype dtype, int tp, int layers,
                              bool first_stage, bool last_stage, const GpuSpec& gpu,
                              const KvCacheLimits& limits) {
  const double e = activation_element_bytes(dtype);
  KvCacheBudget b;
  b.usable_bytes = gpu.hbm_bytes * limits.gpu_memory_utilization;
  double params = layers * model.layer_params();
  if (first_stage) params += model.embedding_params();
  if (last_stage) {
    params += model.final_norm_params() + model.lm_head_params();
    // A tied LM head on a stage without the embedding keeps its own copy of the table.
    if (model.lm_head_params() == 0 && !first_stage) params += model.embedding_params();
  }
  b.weights_bytes = params / tp * e;
  // vLLM sizes the cache after profiling one forward pass of max_batched_tokens tokens; the
  // largest tensors live at once are the layer input and its normed copy [T, h], the gate-and-up
  // output [T, 2 ffn / tp] and the activation's output [T, ffn / tp], plus fp32 logits for
  // max_num_seqs rows over the whole vocabulary (gathered for sampling).
  const double t = static_cast<double>(limits.max_batched_tokens);
  const double ffn = static_cast<double>(model.ffn_hidden_size) / tp;
  b.workspace_bytes = e * t * (2.0 * model.hidden_size + 3.0 * ffn) +
                      4.0 * limits.max_num_seqs * static_cast<double>(model.vocab_size);
  b.kv_bytes_per_token = layers * kv_bytes_per_token_per_layer(model, dtype, tp);
  count_blocks(b, limits.block_tokens, fmt::format("{} layers of {} on {} with tp {}", layers, model.name, gpu.key, tp));
  return b;
}

KvCacheBudget with_draft_model(const KvCacheBudget& stage, const KvCacheBudget& draft, const GpuSpec& gpu,
                               int block_tokens) {
  KvCacheBudget b = stage;
  b.weights_bytes += draft.weights_bytes;
  b.workspace_bytes = std::max(stage.workspace_bytes, draft.workspace_bytes);
  b.kv_bytes_per_token += draft.kv_bytes_per_token;
  count_blocks(b, block_tokens, fmt::format("the first stage's layers and the draft model on {}", gpu.key));
  return b;
}

}  // namespace hetsim::serving

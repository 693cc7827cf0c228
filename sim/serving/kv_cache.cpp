#include "sim/serving/kv_cache.hpp"

#include <fmt/format.h>

#include <cmath>

#include "base/error.hpp"
#include "models/layer_ops.hpp"

namespace hetsim::serving {

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
  const double kv_heads = std::ceil(static_cast<double>(model.num_kv_heads) / tp);
  b.kv_bytes_per_token = 2.0 * layers * kv_heads * model.head_dim() * e;
  const double free_bytes = b.usable_bytes - b.weights_bytes - b.workspace_bytes;
  const double block_bytes = b.kv_bytes_per_token * limits.block_tokens;
  b.blocks = free_bytes > 0 ? static_cast<long>(std::floor(free_bytes / block_bytes)) : 0;
  if (b.blocks < 1)
    throw PlanError(fmt::format(
        "serve: {} layers of {} on {} with tp {} leave no room for the KV cache ({:.2f} GB usable, "
        "{:.2f} GB weights, {:.2f} GB workspace); use more GPUs per replica (--tp, --pp) or fewer "
        "--max-batched-tokens",
        layers, model.name, gpu.key, tp, b.usable_bytes / 1e9, b.weights_bytes / 1e9, b.workspace_bytes / 1e9));
  return b;
}

}  // namespace hetsim::serving

#pragma once
// KV-cache memory of a serving replica, in paged blocks (vLLM's PagedAttention, Kwon et al.,
// SOSP'23: 16 tokens per block by default). Each GPU of a stage holds the keys and values of its
// layers and of its share of the KV heads; what is left of its memory after the weights and the
// forward pass's workspace holds blocks. A replica has as many blocks as its tightest stage.
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"

namespace hetsim::serving {

struct KvCacheLimits {
  int block_tokens = 16;               // vLLM's default block size
  double gpu_memory_utilization = 0.9;  // vLLM's default share of GPU memory it may use
  long max_batched_tokens = 8192;       // the workspace is sized for the largest iteration
  int max_num_seqs = 256;               // vLLM's default: sequences per iteration
};

// One GPU of one stage.
struct KvCacheBudget {
  double usable_bytes = 0;          // HBM * gpu_memory_utilization
  double weights_bytes = 0;         // the stage's layers (and embedding / LM head) / tp
  double workspace_bytes = 0;       // activations of the largest forward pass, logits
  double kv_bytes_per_token = 0;    // 2 (K, V) * layers * KV heads per GPU * head_dim * element
  long blocks = 0;                  // floor((usable - weights - workspace) / (block * per token))
};

// Bytes of one token's keys and values in one layer, on one GPU of a tp group.
double kv_bytes_per_token_per_layer(const TransformerConfig& model, Dtype dtype, int tp);
// Bytes of one layer's weights on one GPU of a tp group, in the serving precision.
double layer_weight_bytes(const TransformerConfig& model, Dtype dtype, int tp);

// Throws PlanError naming the GPU when the weights and workspace leave no room for one block.
KvCacheBudget kv_cache_budget(const TransformerConfig& model, Dtype dtype, int tp, int layers,
                              bool first_stage, bool last_stage, const GpuSpec& gpu,
                              const KvCacheLimits& limits);

// The first stage's budget when it also runs a speculative-decoding draft model (`draft`: the
// draft's budget alone on the same GPU): both models' weights, the larger of the two workspaces
// (their passes run one after the other), and each block holds its tokens' keys and values in
// both models' caches. Throws PlanError as kv_cache_budget does.
KvCacheBudget with_draft_model(const KvCacheBudget& stage, const KvCacheBudget& draft, const GpuSpec& gpu,
                               int block_tokens);

// Blocks holding `tokens` tokens.
inline long blocks_for(long tokens, int block_tokens) { return (tokens + block_tokens - 1) / block_tokens; }

}  // namespace hetsim::serving

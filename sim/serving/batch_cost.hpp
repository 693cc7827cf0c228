#pragma once
// What one iteration of a serving replica costs: the tokens it computes (prefill chunks and
// decode tokens, with the keys their attention reads) through every stage of a tp x pp replica,
// op by op on each stage's GPU type. Inference runs the forward pass only. The linear layers,
// norms and elementwise kernels are the training model's ops (models/layer_ops.hpp) costed by
// cost_ops (the GPU's measured profile where it has them, else the roofline); the attention
// core is costed by the roofline here, since serving attention differs from training's:
//  - prefill attention (FlashAttention's varlen kernel in vLLM): causal, 4 FLOPs per head
//    dimension per query-key pair, reading Q, the K and V of every key and writing the output;
//  - decode attention (vLLM's paged-attention kernel): one query per sequence against its whole
//    KV cache, so it reads 2 * keys * kv_heads * head_dim elements for a few FLOPs per byte:
//    memory-bound on every GPU in the catalog.
// Each stage's layers run one after another; an iteration's micro-batch goes through the stages
// in turn, each handing its hidden states and residual to the next over the cluster routes as
// vLLM does (transfer_seconds).
#include <limits>
#include <unordered_map>
#include <vector>

#include "models/calibration/profile.hpp"
#include "models/chunk_cost.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"

namespace hetsim::serving {

// The tokens one iteration computes on a replica.
struct IterationWork {
  long prefill_tokens = 0;               // prompt tokens (chunks) computed this iteration
  double prefill_attention_pairs = 0;    // sum over chunks of c*p + c*(c+1)/2 causal query-key pairs
  double prefill_key_tokens = 0;         // sum over chunks of p + c: keys (cached and new) read
  long decode_tokens = 0;                // sequences computing one token each
  double decode_key_tokens = 0;          // sum over them of their keys (KV cache + the new token)
  long sampled_tokens = 0;               // rows through the LM head: one per sequence emitting a token
  long tokens() const { return prefill_tokens + decode_tokens; }
  // Adds a prefill chunk of `chunk` tokens after `cached` tokens already in the KV cache.
  void add_prefill(long chunk, long cached, bool emits_token);
  // Adds one decode token of a sequence with `cached` tokens in the KV cache.
  void add_decode(long cached);
  // Speculative decoding: the target model verifies `tokens` tokens of a sequence (its last
  // output token and the draft's proposals) in one causal pass over `cached` tokens in the KV
  // cache; every position goes through the LM head, since each is checked against the draft.
  void add_verification(long tokens, long cached);
};

// One pipeline stage of a replica: the GPU type of its tensor-parallel group, that type's
// measured profile (null: roofline only), the links of its TP collectives and the routes to the
// next stage (unused on the last): each TP rank's to the same rank of the next stage, taken
// together as all of them carry a message at once (the slowest route's latency, and the share
// of the busiest link they cross that each message gets).
struct StageHardware {
  const GpuSpec* gpu = nullptr;
  const calibration::Profile* profile = nullptr;
  TensorParallelLinks tp_links;
  double next_latency_s = 0;
  double next_bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
};

// Throws PlanError unless `layers_per_stage` gives each of `stages` stages at least one layer and
// sums to the model's layers.
void check_layer_split(const TransformerConfig& model, int stages, const std::vector<int>& layers_per_stage);

class ReplicaCost {
 public:
  // `layers_per_stage` gives each stage's layers (one count per stage, each >= 1, summing to the
  // model's layers); empty: split evenly, the remainder to the first stages. Throws PlanError
  // for a model or split serving cannot cost (MoE, heads not divisible by tp, more stages than
  // layers, a bad split, a GPU without `dtype`).
  ReplicaCost(const TransformerConfig& model, Dtype dtype, int tp, std::vector<StageHardware> stages,
              std::vector<int> layers_per_stage = {});

  // Moves the stage boundaries (a run-time re-split); checked as the constructor's split.
  void set_split(std::vector<int> layers_per_stage);
  const std::vector<int>& split() const { return layers_; }

  int tp() const { return tp_; }
  int pp() const { return static_cast<int>(stages_.size()); }
  int stage_layers(int stage) const { return layers_[stage]; }
  const StageHardware& stage(int stage) const { return stages_[stage]; }

  // Seconds of `work` on one GPU of `stage` (all of its layers, the embedding on the first stage,
  // final norm and LM head on the last), TP collectives included.
  double stage_seconds(int stage, const IterationWork& work) const;
  // Seconds to hand `work`'s hidden states from `stage` to the next one. vLLM's stages hand over
  // two [tokens, h] tensors, hidden states and residual, one after the other (send_tensor_dict
  // with the TP group as all_gather_group, vllm/distributed/parallel_state.py): when a tensor's
  // elements divide by tp, each TP rank sends its 1/tp slice to the same rank of the next stage,
  // all at once, and the next stage all-gathers the slices over its TP links; otherwise every
  // rank sends the whole tensor. Each send pays its route's latency.
  double transfer_seconds(int stage, const IterationWork& work) const;
  // Every stage and every hand-over, in order: the iteration's latency on an idle replica.
  double iteration_seconds(const IterationWork& work) const;

  // Parts of one layer on `stage`, exposed for the closed-form tests: the ops whose work scales
  // with the token count (norms, GEMMs, RoPE, SwiGLU, adds and the two TP all-reduces), and the
  // attention core's prefill and decode kernels.
  double layer_token_seconds(int stage, long tokens) const;
  double prefill_attention_seconds(int stage, const IterationWork& work) const;
  double decode_attention_seconds(int stage, const IterationWork& work) const;
  double embedding_seconds(int stage, long tokens) const;
  double lm_head_seconds(int stage, long tokens, long sampled) const;

 private:
  // The attention core of one layer on `stage`: Q·K^T and P·V over `attended_pairs` query-key
  // pairs (4 FLOPs per pair and head dimension), reading Q, writing O and reading the K and V of
  // `key_tokens` keys.
  double attention_seconds(int stage, long query_tokens, double attended_pairs, double key_tokens) const;

  const TransformerConfig* model_;
  Dtype dtype_;
  int tp_;
  double element_bytes_;
  std::vector<StageHardware> stages_;
  std::vector<int> layers_;
  // layer_token_seconds by token count, per stage: iterations repeat the same few counts.
  mutable std::vector<std::unordered_map<long, double>> layer_cache_;
};

}  // namespace hetsim::serving

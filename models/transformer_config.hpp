#pragma once
// A decoder-only transformer as HuggingFace's config.json describes it (Llama, Mistral, Qwen2,
// GPT-NeoX and GPT-2/GPT-3 field names accepted as they are), dense or Mixture-of-Experts
// (Mixtral, Qwen2-MoE, Qwen3-MoE field names).
#include <string>
#include <vector>

namespace hetsim {

enum class MlpKind { kGelu, kSwiGlu };
enum class NormKind { kLayerNorm, kRmsNorm };

struct TransformerConfig {
  std::string name;           // from "_name_or_path" or the file name
  std::string source_file;
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;       // == num_heads without grouped-query attention
  int ffn_hidden_size = 0;     // the dense MLP's (unused when every layer is MoE)
  int vocab_size = 0;
  // Mixture of Experts: every layer's MLP is replaced by a router, num_experts expert MLPs of
  // which each token uses experts_per_token, and optionally one shared expert every token uses.
  int num_experts = 0;                    // 0: a dense model
  int experts_per_token = 0;              // top-k
  int expert_ffn_hidden_size = 0;         // one expert's MLP width
  int shared_expert_ffn_hidden_size = 0;  // 0: no shared expert
  bool shared_expert_gate = false;        // Qwen2-MoE's sigmoid gate on the shared expert (h x 1)
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool has_dropout = false;   // dropout masks are kept for backward (GPT-3 / Megatron GPT)
  bool tied_embeddings = false;
  bool linear_bias = false;   // GEMMs carry biases (GPT-2/GPT-3, GPT-NeoX); Llama has none
  int learned_positions = 0;  // rows of a learned position embedding (GPT-2/GPT-3); 0 = rotary
  // GPT-NeoX's use_parallel_residual: x + attention(norm1(x)) + mlp(norm2(x)), one residual add.
  bool parallel_residual = false;
  int head_size = 0;          // an explicit "head_dim"; 0: hidden_size / num_heads
  // Sliding-window attention (Mistral, Qwen2 "sliding_window"): each query attends to at most
  // this many keys; 0: the whole sequence.
  int sliding_window = 0;
  // Config fields that would change the cost but that hetsim does not model, each as
  // "key: why": reported to the caller, never silently dropped.
  std::vector<std::string> ignored_fields;
  int head_dim() const { return head_size > 0 ? head_size : hidden_size / num_heads; }
  // Keys attended to per query: the window, or the whole sequence of `seq_length`.
  double attended_keys(double seq_length) const {
    return sliding_window > 0 && sliding_window < seq_length ? sliding_window : seq_length;
  }
  bool is_moe() const { return num_experts > 0; }
  // Parameters of one transformer layer, of the input embedding and of the LM head.
  double layer_params() const;
  double embedding_params() const;
  double lm_head_params() const;  // 0 when tied to the embedding
  double final_norm_params() const;
  double total_params() const;
  // Parts of a layer: attention (weights and biases), the two norms, the dense MLP (0 for MoE),
  // one routed expert, the router (h x num_experts), the shared expert with its gate.
  double attention_params() const;
  double norm_params() const;
  double dense_mlp_params() const;
  double expert_params() const;
  double router_params() const;
  double shared_expert_params() const;
  // The routed experts of one layer: num_experts x expert_params().
  double layer_expert_params() const;
  // Parameters one token goes through: in a MoE layer the router, experts_per_token experts and
  // the shared expert (Mixtral's "12.9B active"); equal to the totals for a dense model.
  double layer_active_params() const;
  double active_params() const;
};

// Reads a config.json. Keys that do not change the cost (token ids, initializer ranges, epsilons,
// RoPE bases...) are accepted; any other key hetsim does not model is listed in
// `ignored_fields`. Missing or ill-typed required fields, and shapes hetsim cannot model (top-k
// above the expert count, dense layers mixed with MoE ones, DeepSeek's n_routed_experts, sliding-
// window layers mixed with full ones), are InputErrors naming the JSON path.
TransformerConfig load_transformer_config(const std::string& path);

}  // namespace hetsim

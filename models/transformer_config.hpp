#pragma once
// A decoder-only transformer as HuggingFace's config.json describes it (Llama, Mistral, Qwen2,
// GPT-NeoX and GPT-2/GPT-3 field names accepted as they are), dense or Mixture-of-Experts
// (Mixtral, Qwen2-MoE, Qwen3-MoE field names), or DeepSeek-V2/V3 (dense first layers, then MoE
// layers, with multi-head latent attention).
#include <algorithm>
#include <string>
#include <vector>

namespace hetsim {

enum class MlpKind { kGelu, kSwiGlu };
enum class NormKind { kLayerNorm, kRmsNorm };

// Multi-head latent attention (DeepSeek-V2 section 2.1, DeepSeek-V3 section 2.1.1): queries and
// keys/values go through low-rank latents, each with its RMSNorm, and every head's query and key
// are a "nope" part from the latent and a RoPE part (the key's RoPE part shared by all heads).
struct LatentAttention {
  int q_lora_rank = 0;       // 0: queries projected straight from the hidden state (V2-Lite)
  int kv_lora_rank = 0;      // 0: no latent attention
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

struct TransformerConfig {
  std::string name;           // from "_name_or_path" or the file name
  std::string source_file;
  int num_layers = 0;
  int hidden_size = 0;
  int num_heads = 0;
  int num_kv_heads = 0;       // == num_heads without grouped-query attention
  int ffn_hidden_size = 0;     // the dense MLP's (unused when every layer is MoE)
  int vocab_size = 0;
  // A sequence-classification head (architectures "...ForSequenceClassification", transformers'
  // score = Linear(h, num_labels, bias=False) over every token, pooled at one) in place of the LM
  // head: its width; 0: an LM head over the vocabulary.
  int num_labels = 0;
  int output_width() const { return num_labels > 0 ? num_labels : vocab_size; }
  // Mixture of Experts: every layer's MLP is replaced by a router, num_experts expert MLPs of
  // which each token uses experts_per_token, and optionally one shared expert every token uses.
  int num_experts = 0;                    // 0: a dense model
  int experts_per_token = 0;              // top-k
  int expert_ffn_hidden_size = 0;         // one expert's MLP width
  int shared_expert_ffn_hidden_size = 0;  // 0: no shared expert
  bool shared_expert_gate = false;        // Qwen2-MoE's sigmoid gate on the shared expert (h x 1)
  // DeepSeek-MoE's first_k_dense_replace: layers [0, first_dense_layers) of a MoE model keep a
  // dense MLP of ffn_hidden_size; the rest are MoE.
  int first_dense_layers = 0;
  LatentAttention mla;
  // DeepSeek-V3's multi-token prediction depth (num_nextn_predict_layers, section 2.2): after the
  // main model, each depth normalizes the hidden state and the next token's embedding, projects
  // their concatenation 2h -> h, runs one more transformer layer (a MoE one in a MoE model) and
  // the shared LM head and cross entropy again. The embedding and LM head are the main model's.
  int mtp_depth = 0;
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
  bool is_mla() const { return mla.kv_lora_rank > 0; }
  // Head widths of the attention core: queries and keys (qk_nope + qk_rope with MLA), values.
  int query_key_head_dim() const {
    return is_mla() ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim();
  }
  int value_head_dim() const { return is_mla() ? mla.v_head_dim : head_dim(); }
  // Of the layers [first, first + count), how many are among the first_dense_layers.
  int first_dense_layers_in(int first, int count) const;
  // Where a run of `count` layers like most of the model's starts: past DeepSeek's dense first
  // layers where the model has room (0 for a model whose layers are all alike).
  int first_layer_past_dense(int count) const { return std::min(first_dense_layers, num_layers - count); }
  // The model as one of its dense layers sees it (no experts): what the per-layer functions
  // below and the layer cost model take for DeepSeek's first dense layers. For a model whose
  // layers are all alike, the model itself.
  TransformerConfig dense_layer_model() const;
  // Parameters of one transformer layer (a MoE one in a MoE model), of the input embedding and
  // of the LM head.
  double layer_params() const;
  double embedding_params() const;
  double lm_head_params() const;  // 0 when tied to the embedding
  double final_norm_params() const;
  double total_params() const;  // with the multi-token prediction modules
  // Parts of a layer: attention (weights and biases; with MLA the down- and up-projections,
  // the latent RMSNorms and the output projection), the two norms, the dense MLP (0 for MoE),
  // one routed expert, the router (h x num_experts), the shared expert with its gate.
  double attention_params() const;
  // Of attention_params, what every tensor-parallel rank holds whole: MLA's down-projections
  // and latent norms (Megatron-core runs them duplicated); 0 without MLA.
  double attention_replicated_params() const;
  double norm_params() const;
  double dense_mlp_params() const;
  double expert_params() const;
  double router_params() const;
  double shared_expert_params() const;
  // The routed experts of one layer: num_experts x expert_params().
  double layer_expert_params() const;
  // Parameters one token goes through: in a MoE layer the router, experts_per_token experts and
  // the shared expert (Mixtral's "12.9B active"); equal to the totals for a dense model.
  // Whole-model sums count dense_layer_model()'s layers for the first_dense_layers.
  double layer_active_params() const;
  double active_params() const;
  // One multi-token prediction module: its embedding, hidden-state and final norms, the 2h x h
  // projection and its transformer layer (all of that layer's parameters, or those a token goes
  // through). total_params and active_params count mtp_depth of them.
  double mtp_module_params() const;
  double mtp_module_active_params() const;
};

// Reads a config.json. Keys that do not change the cost (token ids, initializer ranges, epsilons,
// RoPE bases...) are accepted; any other key hetsim does not model is listed in
// `ignored_fields`. Missing or ill-typed required fields, and shapes hetsim cannot model (top-k
// above the expert count, dense layers among MoE ones other than DeepSeek's first ones, a
// moe_layer_freq other than 1, sliding-window layers mixed with full ones), are InputErrors
// naming the JSON path.
TransformerConfig load_transformer_config(const std::string& path);

}  // namespace hetsim

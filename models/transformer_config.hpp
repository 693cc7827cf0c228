#pragma once
// A decoder-only transformer as HuggingFace's config.json describes it (Llama, Mistral, Qwen2,
// GPT-NeoX and GPT-2/GPT-3 field names accepted as they are).
#include <string>

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
  int ffn_hidden_size = 0;
  int vocab_size = 0;
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool has_dropout = false;   // dropout masks are kept for backward (GPT-3 / Megatron GPT)
  bool tied_embeddings = false;
  bool linear_bias = false;   // GEMMs carry biases (GPT-2/GPT-3, GPT-NeoX); Llama has none
  int learned_positions = 0;  // rows of a learned position embedding (GPT-2/GPT-3); 0 = rotary
  int head_dim() const { return hidden_size / num_heads; }
  // Parameters of one transformer layer, of the input embedding and of the LM head.
  double layer_params() const;
  double embedding_params() const;
  double lm_head_params() const;  // 0 when tied to the embedding
  double final_norm_params() const;
  double total_params() const;
};

// Reads a config.json. Unknown keys are accepted (HuggingFace configs carry many); missing or
// ill-typed required fields are InputErrors naming the JSON path.
TransformerConfig load_transformer_config(const std::string& path);

}  // namespace hetsim

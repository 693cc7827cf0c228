// Reading HuggingFace config.json files (Llama/Mistral/Qwen2, GPT-NeoX, GPT-2/GPT-3 field names).
#include "models/transformer_config.hpp"

#include <filesystem>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim {

namespace {

int read_positive_int(const JsonInput& root, const std::string& key) {
  const long long v = root.positive_integer(key);
  if (v > 1'000'000'000LL) root.at(key).fail("an integer <= 1000000000");
  return static_cast<int>(v);
}

// GPT-2 style configs ("n_embd"); GPT-3 is described with the same names.
void read_gpt2(const JsonInput& root, TransformerConfig& c) {
  c.hidden_size = read_positive_int(root, "n_embd");
  c.num_heads = read_positive_int(root, "n_head");
  c.num_kv_heads = c.num_heads;
  c.num_layers = read_positive_int(root, "n_layer");
  c.vocab_size = read_positive_int(root, "vocab_size");
  // n_inner is null in GPT-2's own configs, meaning 4h (transformers' GPT2MLP).
  const bool has_inner = root.has("n_inner") && !root.value().at("n_inner").is_null();
  c.ffn_hidden_size = has_inner ? read_positive_int(root, "n_inner") : 4 * c.hidden_size;
  c.learned_positions = read_positive_int(root, "n_positions");
  c.mlp = MlpKind::kGelu;
  c.norm = NormKind::kLayerNorm;
  c.linear_bias = true;
  c.has_dropout = root.non_negative_or("resid_pdrop", 0.0) > 0 ||
                  root.non_negative_or("attn_pdrop", 0.0) > 0 ||
                  root.non_negative_or("embd_pdrop", 0.0) > 0;
  c.tied_embeddings = root.boolean_or("tie_word_embeddings", true);
}

// Llama, Mistral, Qwen2 and GPT-NeoX ("hidden_size").
void read_hidden_size_family(const JsonInput& root, TransformerConfig& c) {
  c.hidden_size = read_positive_int(root, "hidden_size");
  c.num_heads = read_positive_int(root, "num_attention_heads");
  c.num_kv_heads = root.has("num_key_value_heads") ? read_positive_int(root, "num_key_value_heads")
                                                   : c.num_heads;
  c.num_layers = read_positive_int(root, "num_hidden_layers");
  c.vocab_size = read_positive_int(root, "vocab_size");
  c.ffn_hidden_size = read_positive_int(root, "intermediate_size");
  const std::string act = root.string_or("hidden_act", "silu");
  const std::string model_type = root.string_or("model_type", "");
  if (act == "silu" || act == "swiglu") {
    c.mlp = MlpKind::kSwiGlu;  // Llama-family MLP: down(silu(gate(x)) * up(x))
  } else if (act.rfind("gelu", 0) == 0) {
    c.mlp = MlpKind::kGelu;
  } else {
    root.at("hidden_act").fail("\"silu\", \"swiglu\" or a \"gelu\" variant");
  }
  const bool neox = model_type == "gpt_neox";
  c.norm = neox ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  c.linear_bias = neox || root.boolean_or("attention_bias", false);
  c.has_dropout = root.non_negative_or("attention_dropout", 0.0) > 0 ||
                  root.non_negative_or("hidden_dropout", 0.0) > 0;
  c.tied_embeddings = root.boolean_or("tie_word_embeddings", !neox);
}

}  // namespace

double TransformerConfig::layer_params() const {
  const double h = hidden_size;
  const double qkv_out = static_cast<double>(num_heads + 2 * num_kv_heads) * head_dim();
  const double attention = h * qkv_out + static_cast<double>(num_heads) * head_dim() * h;
  const double f = ffn_hidden_size;
  const bool swiglu = mlp == MlpKind::kSwiGlu;
  const double mlp_weights = swiglu ? 3.0 * h * f : 2.0 * h * f;
  const double biases = linear_bias ? qkv_out + h + (swiglu ? 2.0 * f : f) + h : 0.0;
  const double norms = norm == NormKind::kLayerNorm ? 4.0 * h : 2.0 * h;  // scale (+ shift)
  return attention + mlp_weights + biases + norms;
}

double TransformerConfig::embedding_params() const {
  return static_cast<double>(vocab_size) * hidden_size +
         static_cast<double>(learned_positions) * hidden_size;
}

double TransformerConfig::lm_head_params() const {
  return tied_embeddings ? 0.0 : static_cast<double>(vocab_size) * hidden_size;
}

double TransformerConfig::final_norm_params() const {
  return norm == NormKind::kLayerNorm ? 2.0 * hidden_size : hidden_size;
}

double TransformerConfig::total_params() const {
  return num_layers * layer_params() + embedding_params() + lm_head_params() + final_norm_params();
}

TransformerConfig load_transformer_config(const std::string& path) {
  const nlohmann::json doc = read_json_file(path);
  const JsonInput root(doc, path);
  if (!doc.is_object()) root.fail("an object (a HuggingFace config.json)");
  TransformerConfig c;
  c.source_file = path;
  c.name = root.string_or("_name_or_path", std::filesystem::path(path).stem().string());
  if (root.has("n_embd")) {
    read_gpt2(root, c);
  } else if (root.has("hidden_size")) {
    read_hidden_size_family(root, c);
  } else {
    throw InputError(path, "/hidden_size", "nothing (missing)",
                     "\"hidden_size\" (Llama/Mistral/Qwen2/GPT-NeoX) or \"n_embd\" (GPT-2)");
  }
  if (c.hidden_size % c.num_heads != 0) {
    root.at(root.has("n_embd") ? "n_head" : "num_attention_heads")
        .fail("a divisor of the hidden size " + std::to_string(c.hidden_size));
  }
  if (c.num_heads % c.num_kv_heads != 0) {
    root.at("num_key_value_heads")
        .fail("a divisor of num_attention_heads " + std::to_string(c.num_heads));
  }
  return c;
}

}  // namespace hetsim

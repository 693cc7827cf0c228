// Reading HuggingFace config.json files (Llama/Mistral/Qwen2, GPT-NeoX, GPT-2/GPT-3 field names).
#include "models/transformer_config.hpp"

#include <filesystem>
#include <string>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim {

namespace {

// Upper bounds on a config's sizes. The largest published models sit far below them: Llama-3-405B
// is 16,384 wide with 126 layers, 128 heads and an MLP of 53,248 (its config.json); DeepSeek-V3
// routes over 256 experts; vocabularies reach about 256k. Bounded this way, every product the cost
// model forms (heads x head_dim, h x ffn x layers, vocab x h) stays exact in an int or a double,
// and no count can size an allocation beyond memory.
constexpr long long kMaxHidden = 1LL << 20;  // hidden_size, head_dim, heads x head_dim
constexpr long long kMaxCount = 1LL << 16;   // layers, attention and key-value heads, experts
constexpr long long kMaxFfn = 1LL << 22;     // intermediate (MLP and expert) widths
constexpr long long kMaxRows = 1LL << 24;    // vocabulary, learned positions
constexpr long long kMaxWindow = 1LL << 30;  // sliding window, in tokens

int read_positive_int(const JsonInput& root, const std::string& key, long long high) {
  const long long v = root.positive_integer(key);
  if (v > high) root.at(key).fail("an integer in [1, " + std::to_string(high) + "]");
  return static_cast<int>(v);
}

int read_non_negative_int(const JsonInput& root, const std::string& key, long long high) {
  const long long v = root.integer(key);
  if (v < 0 || v > high) root.at(key).fail("an integer in [0, " + std::to_string(high) + "]");
  return static_cast<int>(v);
}

bool has_non_null(const JsonInput& root, const std::string& key) {
  return root.has(key) && !root.value().at(key).is_null();
}

// Mistral's and Qwen2's sliding window: every layer windowed, or (Qwen2) none when
// use_sliding_window is false or max_window_layers covers all layers (transformers' Qwen2 keeps
// the first max_window_layers layers on full attention).
void read_sliding_window(const JsonInput& root, TransformerConfig& c) {
  if (!has_non_null(root, "sliding_window") || !root.boolean_or("use_sliding_window", true)) return;
  const long long full_layers = root.integer_or("max_window_layers", 0);
  if (full_layers >= c.num_layers) return;
  if (full_layers > 0) {
    root.at("max_window_layers")
        .fail("0 or >= num_hidden_layers (sliding-window layers mixed with full ones are not "
              "modeled)");
  }
  c.sliding_window = read_positive_int(root, "sliding_window", kMaxWindow);
}

// Keys that change no cost hetsim computes: token ids, initialization, numerical epsilons, RoPE
// bases and scaling, inference switches, bookkeeping; and the keys hetsim reads.
bool known_key(const std::string& key) {
  static const char* const kKnown[] = {
      // no cost
      "_name_or_path", "architectures", "model_type", "torch_dtype", "transformers_version",
      "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id",
      "initializer_range", "initializer_factor", "layer_norm_epsilon", "layer_norm_eps",
      "rms_norm_eps", "rope_theta", "rotary_emb_base", "rope_scaling", "max_position_embeddings",
      "n_ctx", "use_cache", "output_router_logits", "pretraining_tp", "scale_attn_weights",
      "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels",
      "summary_first_dropout", "task_specific_params", "classifier_dropout", "use_sliding_window",
      "max_window_layers", "attention_dropout", "hidden_dropout",
      // read
      "n_embd", "n_head", "n_layer", "n_inner", "n_positions", "vocab_size", "resid_pdrop",
      "attn_pdrop", "embd_pdrop", "tie_word_embeddings", "activation_function", "hidden_size",
      "num_attention_heads", "num_key_value_heads", "num_hidden_layers", "intermediate_size",
      "hidden_act", "attention_bias", "head_dim", "sliding_window", "use_parallel_residual",
      "rotary_pct", "num_local_experts", "num_experts", "num_experts_per_tok",
      "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
      "mlp_only_layers"};
  for (const char* k : kKnown)
    if (key == k) return true;
  return false;
}

// Every key that is neither read nor cost-free, and read keys whose value hetsim cannot honour.
std::vector<std::string> ignored_fields_of(const nlohmann::json& doc) {
  std::vector<std::string> ignored;
  for (const auto& [key, value] : doc.items()) {
    if (key == "mlp_bias") {
      if (value.is_boolean() && value.get<bool>()) ignored.push_back("mlp_bias: MLP biases are not modeled");
    } else if (key == "activation_function" && value.is_string() &&
               value.get<std::string>().rfind("gelu", 0) != 0) {
      ignored.push_back("activation_function: \"" + value.get<std::string>() +
                        "\" is costed as GeLU");
    } else if (!known_key(key)) {
      ignored.push_back(key + ": not modeled");
    }
  }
  return ignored;
}

// GPT-2 style configs ("n_embd"); GPT-3 is described with the same names.
void read_gpt2(const JsonInput& root, TransformerConfig& c) {
  c.hidden_size = read_positive_int(root, "n_embd", kMaxHidden);
  c.num_heads = read_positive_int(root, "n_head", kMaxCount);
  c.num_kv_heads = c.num_heads;
  c.num_layers = read_positive_int(root, "n_layer", kMaxCount);
  c.vocab_size = read_positive_int(root, "vocab_size", kMaxRows);
  // n_inner is null in GPT-2's own configs, meaning 4h (transformers' GPT2MLP).
  const bool has_inner = root.has("n_inner") && !root.value().at("n_inner").is_null();
  c.ffn_hidden_size = has_inner ? read_positive_int(root, "n_inner", kMaxFfn) : 4 * c.hidden_size;
  c.learned_positions = read_positive_int(root, "n_positions", kMaxRows);
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
  c.hidden_size = read_positive_int(root, "hidden_size", kMaxHidden);
  c.num_heads = read_positive_int(root, "num_attention_heads", kMaxCount);
  c.num_kv_heads = root.has("num_key_value_heads") ? read_positive_int(root, "num_key_value_heads", kMaxCount)
                                                   : c.num_heads;
  c.num_layers = read_positive_int(root, "num_hidden_layers", kMaxCount);
  c.vocab_size = read_positive_int(root, "vocab_size", kMaxRows);
  c.ffn_hidden_size = read_positive_int(root, "intermediate_size", kMaxFfn);
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
  if (neox) {
    // transformers' GPTNeoXConfig defaults: use_parallel_residual true, rotary_pct 0.25. With no
    // rotary part, positions are a learned table of max_position_embeddings rows.
    c.parallel_residual = root.boolean_or("use_parallel_residual", true);
    const double rotary_pct = root.non_negative_or("rotary_pct", 0.25);
    if (rotary_pct > 1) root.at("rotary_pct").fail("a fraction in [0, 1]");
    if (rotary_pct == 0) c.learned_positions = read_positive_int(root, "max_position_embeddings", kMaxRows);
  }
  if (has_non_null(root, "head_dim")) c.head_size = read_positive_int(root, "head_dim", kMaxHidden);
  read_sliding_window(root, c);
  c.norm = neox ? NormKind::kLayerNorm : NormKind::kRmsNorm;
  c.linear_bias = neox || root.boolean_or("attention_bias", false);
  c.has_dropout = root.non_negative_or("attention_dropout", 0.0) > 0 ||
                  root.non_negative_or("hidden_dropout", 0.0) > 0;
  c.tied_embeddings = root.boolean_or("tie_word_embeddings", !neox);
}

// Mixture-of-Experts fields, as transformers' MixtralConfig, Qwen2MoeConfig and Qwen3MoeConfig
// name them. Mixtral: num_local_experts experts as wide as intermediate_size. Qwen-MoE:
// num_experts experts of moe_intermediate_size, plus (Qwen2-MoE) a shared expert of
// shared_expert_intermediate_size with a sigmoid gate. An expert count of 0 means dense.
void read_moe(const JsonInput& root, TransformerConfig& c) {
  if (root.has("n_routed_experts")) {
    // DeepSeek-MoE keeps its first layers dense and DeepSeek-V2/V3 use latent attention (MLA);
    // counting them as uniform MoE layers would be silently wrong.
    root.at("n_routed_experts")
        .fail("no DeepSeek-MoE field (dense first layers and MLA are not modeled); "
              "\"num_local_experts\" (Mixtral) or \"num_experts\" (Qwen-MoE)");
  }
  const bool mixtral = has_non_null(root, "num_local_experts");
  const bool qwen = has_non_null(root, "num_experts");
  if (mixtral && qwen) {
    root.at("num_experts").fail("no second expert count next to \"num_local_experts\"");
  }
  if (!mixtral && !qwen) return;
  const std::string count_key = mixtral ? "num_local_experts" : "num_experts";
  c.num_experts = read_non_negative_int(root, count_key, kMaxCount);
  if (c.num_experts == 0) return;
  c.experts_per_token = read_positive_int(root, "num_experts_per_tok", kMaxCount);
  if (c.experts_per_token > c.num_experts) {
    root.at("num_experts_per_tok")
        .fail("an integer <= " + count_key + " (" + std::to_string(c.num_experts) + ")");
  }
  c.expert_ffn_hidden_size =
      mixtral ? c.ffn_hidden_size : read_positive_int(root, "moe_intermediate_size", kMaxFfn);
  if (has_non_null(root, "shared_expert_intermediate_size")) {
    c.shared_expert_ffn_hidden_size =
        read_non_negative_int(root, "shared_expert_intermediate_size", kMaxFfn);
    c.shared_expert_gate = c.shared_expert_ffn_hidden_size > 0;  // Qwen2MoeSparseMoeBlock
  }
  // Qwen-MoE can keep some layers dense (a sparse step above 1, or listed MLP-only layers);
  // hetsim models a model whose layers are all alike.
  const std::string uniform = "every layer MoE; dense layers among MoE ones are not modeled";
  if (root.integer_or("decoder_sparse_step", 1) != 1) {
    root.at("decoder_sparse_step").fail("1 (" + uniform + ")");
  }
  if (has_non_null(root, "mlp_only_layers") && !root.value().at("mlp_only_layers").empty()) {
    root.at("mlp_only_layers").fail("[] (" + uniform + ")");
  }
}

double mlp_weight_params(const TransformerConfig& c, double ffn) {
  const double per_row = c.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0;  // gate, up, down or up, down
  return per_row * c.hidden_size * ffn;
}

}  // namespace

double TransformerConfig::attention_params() const {
  const double h = hidden_size;
  const double qkv_out = static_cast<double>(num_heads + 2 * num_kv_heads) * head_dim();
  const double weights = h * qkv_out + static_cast<double>(num_heads) * head_dim() * h;
  return weights + (linear_bias ? qkv_out + h : 0.0);
}

double TransformerConfig::norm_params() const {
  return norm == NormKind::kLayerNorm ? 4.0 * hidden_size : 2.0 * hidden_size;  // scale (+ shift)
}

double TransformerConfig::dense_mlp_params() const {
  if (is_moe()) return 0.0;
  const double f = ffn_hidden_size;
  const double biases = mlp == MlpKind::kSwiGlu ? 2.0 * f : f;  // up-side biases
  return mlp_weight_params(*this, f) + (linear_bias ? biases + hidden_size : 0.0);
}

// Expert MLPs carry no biases in Mixtral or Qwen-MoE (transformers' MixtralBlockSparseTop2MLP
// and Qwen2MoeMLP are bias-free).
double TransformerConfig::expert_params() const {
  return is_moe() ? mlp_weight_params(*this, expert_ffn_hidden_size) : 0.0;
}

double TransformerConfig::router_params() const {
  return static_cast<double>(hidden_size) * num_experts;
}

double TransformerConfig::shared_expert_params() const {
  const double gate = shared_expert_gate ? static_cast<double>(hidden_size) : 0.0;
  return mlp_weight_params(*this, shared_expert_ffn_hidden_size) + gate;
}

double TransformerConfig::layer_expert_params() const { return num_experts * expert_params(); }

double TransformerConfig::layer_params() const {
  return attention_params() + norm_params() + dense_mlp_params() + router_params() +
         layer_expert_params() + shared_expert_params();
}

double TransformerConfig::layer_active_params() const {
  return attention_params() + norm_params() + dense_mlp_params() + router_params() +
         experts_per_token * expert_params() + shared_expert_params();
}

double TransformerConfig::active_params() const {
  return num_layers * layer_active_params() + embedding_params() + lm_head_params() +
         final_norm_params();
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
    read_moe(root, c);
  } else {
    throw InputError(path, "/hidden_size", "nothing (missing)",
                     "\"hidden_size\" (Llama/Mistral/Qwen2/GPT-NeoX) or \"n_embd\" (GPT-2)");
  }
  c.ignored_fields = ignored_fields_of(doc);
  if (c.head_size == 0 && c.hidden_size % c.num_heads != 0) {
    root.at(root.has("n_embd") ? "n_head" : "num_attention_heads")
        .fail("a divisor of the hidden size " + std::to_string(c.hidden_size));
  }
  if (c.num_heads % c.num_kv_heads != 0) {
    root.at("num_key_value_heads")
        .fail("a divisor of num_attention_heads " + std::to_string(c.num_heads));
  }
  // An explicit head_dim may make the attention wider than the model (Gemma's is); bounded like h.
  if (static_cast<long long>(c.num_heads) * c.head_dim() > kMaxHidden) {
    root.at("head_dim").fail("a head_dim with num_attention_heads (" + std::to_string(c.num_heads) +
                             ") x head_dim <= " + std::to_string(kMaxHidden));
  }
  return c;
}

}  // namespace hetsim

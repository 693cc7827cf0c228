// Reading HuggingFace config.json files (Llama/Mistral/Qwen2, GPT-NeoX, GPT-2/GPT-3, Mixtral,
// Qwen-MoE and DeepSeek-V2/V3 field names).
#include "models/transformer_config.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
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
constexpr long long kMaxHidden = 1LL << 20;  // hidden_size, head_dims, heads x head_dim, MLA ranks
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
      "label2id", "problem_type",
      "max_window_layers", "attention_dropout", "hidden_dropout", "auto_map",
      // Gemma's name for hidden_act: the MLP's gating is the model type's, its activation one
      // elementwise pass whichever it is.
      "hidden_activation",
      // DeepSeek-V2/V3: the routing's scoring function, top-k method, scaling and normalization
      // of the chosen weights and its auxiliary-loss weights change no FLOP or byte hetsim counts
      // (the router's logits are costed alike); ep_size is transformers' inference hint (the plan
      // sets expert parallelism); quantization_config describes the released checkpoint's fp8
      // weights (the plan sets the training precision).
      "scoring_func", "topk_method", "routed_scaling_factor", "norm_topk_prob", "aux_loss_alpha",
      "seq_aux", "ep_size", "quantization_config",
      // read
      "n_embd", "n_head", "n_layer", "n_inner", "n_positions", "vocab_size", "resid_pdrop",
      "attn_pdrop", "embd_pdrop", "tie_word_embeddings", "activation_function", "hidden_size",
      "num_attention_heads", "num_key_value_heads", "num_hidden_layers", "intermediate_size",
      "hidden_act", "attention_bias", "head_dim", "sliding_window", "use_parallel_residual",
      "rotary_pct", "num_local_experts", "num_experts", "num_experts_per_tok",
      "moe_intermediate_size", "shared_expert_intermediate_size", "decoder_sparse_step",
      "mlp_only_layers", "n_routed_experts", "n_shared_experts", "first_k_dense_replace",
      "moe_layer_freq", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
      "v_head_dim", "num_nextn_predict_layers", "id2label", "num_labels"};
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
    } else if (key == "n_group" || key == "topk_group") {
      ignored.push_back(key + ": group-limited routing is not modeled (all-to-alls are costed with "
                              "tokens spread evenly over the whole expert-parallel group)");
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
  if (act != "silu" && act != "swiglu" && act.rfind("gelu", 0) != 0)
    root.at("hidden_act").fail("\"silu\", \"swiglu\" or a \"gelu\" variant");
  // Whether the MLP is gated is the architecture's, not the activation's: transformers' Gemma
  // MLPs compute down(gelu_tanh(gate(x)) * up(x)) (GeGLU), costed as the SwiGLU MLP (the same
  // three GEMMs; the activation is one elementwise pass either way). Reading Gemma 2's
  // "gelu_pytorch_tanh" as an ungated MLP used to give 7.08B parameters for its 9.24B.
  static const char* const kGatedTypes[] = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe",
                                            "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
                                            "phi3", "olmo", "olmo2", "granite", "cohere"};
  static const char* const kUngatedTypes[] = {"gpt_neox", "falcon", "phi", "starcoder2"};
  const auto listed = [&](const auto& types) {
    return std::find(std::begin(types), std::end(types), model_type) != std::end(types);
  };
  if (listed(kGatedTypes))
    c.mlp = MlpKind::kSwiGlu;
  else if (listed(kUngatedTypes))
    c.mlp = MlpKind::kGelu;
  else  // a model type not listed: the activation's usual MLP (SiLU gated, GeLU not)
    c.mlp = act.rfind("gelu", 0) == 0 ? MlpKind::kGelu : MlpKind::kSwiGlu;
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

// DeepSeek-MoE as transformers' DeepseekV3Config names it: n_routed_experts experts of
// moe_intermediate_size, n_shared_experts shared ones every token goes through without a gate
// (costed as one shared expert n_shared_experts times as wide, as Megatron-core's
// moe_shared_expert_intermediate_size fuses them), and the first first_k_dense_replace layers
// dense with intermediate_size. moe_layer_freq > 1 interleaves dense layers among the MoE ones,
// which is not modeled.
void read_deepseek_moe(const JsonInput& root, TransformerConfig& c) {
  for (const char* other : {"num_local_experts", "num_experts"}) {
    if (has_non_null(root, other)) {
      root.at(other).fail("no second expert count next to \"n_routed_experts\"");
    }
  }
  c.num_experts = read_non_negative_int(root, "n_routed_experts", kMaxCount);
  if (c.num_experts == 0) return;
  c.experts_per_token = read_positive_int(root, "num_experts_per_tok", kMaxCount);
  if (c.experts_per_token > c.num_experts) {
    root.at("num_experts_per_tok")
        .fail("an integer <= n_routed_experts (" + std::to_string(c.num_experts) + ")");
  }
  c.expert_ffn_hidden_size = read_positive_int(root, "moe_intermediate_size", kMaxFfn);
  const long long shared =
      has_non_null(root, "n_shared_experts") ? read_non_negative_int(root, "n_shared_experts", kMaxCount) : 0;
  if (shared * c.expert_ffn_hidden_size > kMaxFfn) {
    root.at("n_shared_experts")
        .fail("n_shared_experts x moe_intermediate_size <= " + std::to_string(kMaxFfn));
  }
  c.shared_expert_ffn_hidden_size = static_cast<int>(shared * c.expert_ffn_hidden_size);
  if (root.integer_or("moe_layer_freq", 1) != 1) {
    root.at("moe_layer_freq")
        .fail("1 (every layer after the first_k_dense_replace ones MoE; dense layers among MoE "
              "ones are not modeled)");
  }
  c.first_dense_layers = has_non_null(root, "first_k_dense_replace")
                             ? read_non_negative_int(root, "first_k_dense_replace", kMaxCount)
                             : 0;
  if (c.first_dense_layers >= c.num_layers) {
    root.at("first_k_dense_replace")
        .fail("an integer < num_hidden_layers (" + std::to_string(c.num_layers) +
              "), leaving a MoE layer");
  }
}

// Multi-head latent attention, present when kv_lora_rank is: the head widths are required;
// q_lora_rank null or absent means no query latent (DeepSeek-V2-Lite).
void read_latent_attention(const JsonInput& root, TransformerConfig& c) {
  if (!has_non_null(root, "kv_lora_rank")) return;
  LatentAttention& a = c.mla;
  a.kv_lora_rank = read_positive_int(root, "kv_lora_rank", kMaxHidden);
  a.q_lora_rank =
      has_non_null(root, "q_lora_rank") ? read_non_negative_int(root, "q_lora_rank", kMaxHidden) : 0;
  a.qk_nope_head_dim = read_non_negative_int(root, "qk_nope_head_dim", kMaxHidden);
  a.qk_rope_head_dim = read_positive_int(root, "qk_rope_head_dim", kMaxHidden);
  a.v_head_dim = read_positive_int(root, "v_head_dim", kMaxHidden);
  // Every head has its own key and value from the latent (transformers' DeepseekV3Attention reads
  // no num_key_value_heads).
  c.num_kv_heads = c.num_heads;
  const long long widest =
      static_cast<long long>(c.num_heads) *
      std::max(a.qk_nope_head_dim + a.qk_rope_head_dim, a.v_head_dim);
  if (widest > kMaxHidden) {
    root.at("num_attention_heads")
        .fail("num_attention_heads (" + std::to_string(c.num_heads) +
              ") x the widest MLA head <= " + std::to_string(kMaxHidden));
  }
}

// Mixture-of-Experts fields, as transformers' MixtralConfig, Qwen2MoeConfig and Qwen3MoeConfig
// name them. Mixtral: num_local_experts experts as wide as intermediate_size. Qwen-MoE:
// num_experts experts of moe_intermediate_size, plus (Qwen2-MoE) a shared expert of
// shared_expert_intermediate_size with a sigmoid gate. An expert count of 0 means dense.
void read_moe(const JsonInput& root, TransformerConfig& c) {
  if (has_non_null(root, "n_routed_experts")) {
    read_deepseek_moe(root, c);
    return;
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

int TransformerConfig::first_dense_layers_in(int first, int count) const {
  return std::clamp(first_dense_layers - first, 0, count);
}

TransformerConfig TransformerConfig::dense_layer_model() const {
  TransformerConfig dense = *this;
  dense.num_experts = 0;
  dense.experts_per_token = 0;
  dense.expert_ffn_hidden_size = 0;
  dense.shared_expert_ffn_hidden_size = 0;
  dense.shared_expert_gate = false;
  dense.first_dense_layers = 0;
  return dense;
}

double TransformerConfig::attention_replicated_params() const {
  if (!is_mla()) return 0.0;
  const double h = hidden_size;
  const double q_down = mla.q_lora_rank > 0 ? h * mla.q_lora_rank + mla.q_lora_rank : 0.0;
  const double kv_down = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank;
  return q_down + kv_down;  // weights and the latent RMSNorms' scales
}

double TransformerConfig::attention_params() const {
  const double h = hidden_size;
  if (is_mla()) {
    // DeepSeek-V2 section 2.1: W^DQ (h x d_c'), W^UQ and W^QR (d_c' x heads(nope + rope)),
    // W^DKV and W^KR (h x (d_c + rope)), W^UK and W^UV (d_c x heads(nope + v)), W^O
    // (heads v x h); no biases.
    const double heads = num_heads;
    const double q_in = mla.q_lora_rank > 0 ? mla.q_lora_rank : h;
    const double q_up = q_in * heads * query_key_head_dim();
    const double kv_up = static_cast<double>(mla.kv_lora_rank) * heads *
                         (mla.qk_nope_head_dim + mla.v_head_dim);
    const double out = heads * mla.v_head_dim * h;
    return attention_replicated_params() + q_up + kv_up + out;
  }
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
  return first_dense_layers * dense_layer_model().layer_active_params() +
         (num_layers - first_dense_layers) * layer_active_params() + embedding_params() +
         lm_head_params() + final_norm_params() + mtp_depth * mtp_module_active_params();
}

// Megatron-core's MultiTokenPredictionLayer: enorm, hnorm, eh_proj (2h -> h, no bias), the
// transformer layer, final_layernorm.
double TransformerConfig::mtp_module_params() const {
  const double h = hidden_size;
  return 3 * final_norm_params() + 2 * h * h + layer_params();
}

double TransformerConfig::mtp_module_active_params() const {
  const double h = hidden_size;
  return 3 * final_norm_params() + 2 * h * h + layer_active_params();
}

double TransformerConfig::embedding_params() const {
  return static_cast<double>(vocab_size) * hidden_size +
         static_cast<double>(learned_positions) * hidden_size;
}

double TransformerConfig::lm_head_params() const {
  return tied_embeddings ? 0.0 : static_cast<double>(output_width()) * hidden_size;
}

double TransformerConfig::final_norm_params() const {
  return norm == NormKind::kLayerNorm ? 2.0 * hidden_size : hidden_size;
}

double TransformerConfig::total_params() const {
  return first_dense_layers * dense_layer_model().layer_params() +
         (num_layers - first_dense_layers) * layer_params() + embedding_params() +
         lm_head_params() + final_norm_params() + mtp_depth * mtp_module_params();
}

// transformers' ...ForSequenceClassification models replace the LM head with a score layer of
// num_labels outputs: len(id2label) as PretrainedConfig counts them, or "num_labels", else its
// default of 2. Such a head is never tied to the input embedding.
void read_classification_head(const JsonInput& root, TransformerConfig& c) {
  bool classifier = false;
  if (root.has("architectures") && root.value().at("architectures").is_array()) {
    const std::string suffix = "ForSequenceClassification";
    for (const nlohmann::json& name : root.value().at("architectures"))
      if (name.is_string() && name.get<std::string>().size() >= suffix.size() &&
          name.get<std::string>().compare(name.get<std::string>().size() - suffix.size(), suffix.size(), suffix) == 0)
        classifier = true;
  }
  if (!classifier) return;
  if (root.has("id2label")) {
    const JsonInput labels = root.at("id2label");
    if (!labels.value().is_object() || labels.value().empty()) labels.fail("an object of one entry per label");
    c.num_labels = static_cast<int>(labels.value().size());
  } else {
    c.num_labels = root.has("num_labels") ? read_positive_int(root, "num_labels", kMaxRows) : 2;
  }
  c.tied_embeddings = false;
}

TransformerConfig load_transformer_config(const std::string& path) {
  const nlohmann::json file_doc = read_json_file(path);
  const JsonInput file_root(file_doc, path);
  if (!file_doc.is_object()) file_root.fail("an object (a HuggingFace config.json)");
  // A multimodal config (Llava, Gemma 3, Qwen2-VL, ...) nests its language model's config under
  // "text_config"; that model is what is trained and costed, and the vision tower beside it is
  // listed among the fields not modelled.
  const bool nested = !file_doc.contains("hidden_size") && !file_doc.contains("n_embd") &&
                      file_doc.contains("text_config");
  const JsonInput root = nested ? file_root.at("text_config") : file_root;
  if (nested && !root.value().is_object()) root.fail("an object (the language model's config)");
  const nlohmann::json& doc = root.value();
  TransformerConfig c;
  c.source_file = path;
  c.name = file_root.string_or("_name_or_path", std::filesystem::path(path).stem().string());
  if (root.has("n_embd")) {
    read_gpt2(root, c);
  } else if (root.has("hidden_size")) {
    read_hidden_size_family(root, c);
    read_moe(root, c);
    read_latent_attention(root, c);
    if (has_non_null(root, "num_nextn_predict_layers")) {
      c.mtp_depth = read_non_negative_int(root, "num_nextn_predict_layers", kMaxCount);
    }
  } else {
    throw InputError(path, root.path() + "/hidden_size", "nothing (missing)",
                     "\"hidden_size\" (Llama/Mistral/Qwen2/GPT-NeoX), \"n_embd\" (GPT-2) or a "
                     "\"text_config\" holding one");
  }
  read_classification_head(root, c);
  c.ignored_fields = ignored_fields_of(doc);
  if (nested)
    for (const auto& [key, value] : file_doc.items())
      if (key != "text_config" && !known_key(key))
        c.ignored_fields.push_back(key + ": not modeled (beside the nested text_config)");
  // MLA's heads have their own widths; the others split the hidden size unless head_dim is given.
  if (!c.is_mla() && c.head_size == 0 && c.hidden_size % c.num_heads != 0) {
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

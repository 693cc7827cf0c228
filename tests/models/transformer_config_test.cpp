// Loading of the shipped HuggingFace configs and rejection of bad ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "models/transformer_config.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::config_path;
using hetsim::test::message_of;
using hetsim::test::write_temp;
}  // namespace

TEST_CASE("every shipped config loads with its published parameter count (within 2%)") {
  // Published sizes: Llama 2 paper (6.7B, 69B), Llama 3 model cards (8.0B, 70.6B, 405B),
  // Llama 3.2 1B model card (1.23B), GPT-3 paper (175B).
  const std::pair<const char*, double> published[] = {
      {"llama-2-7b", 6.7e9},   {"llama-2-70b", 69e9},  {"llama-3-8b", 8.0e9},
      {"llama-3-70b", 70.6e9}, {"llama-3-405b", 405e9}, {"llama-3.2-1b", 1.23e9},
      {"gpt3-175b", 175e9}};
  for (const auto& [name, params] : published) {
    const auto c = hetsim::load_transformer_config(config_path(name));
    MESSAGE(std::string(name) << ": " << c.total_params() / 1e9 << "B parameters, published " << params / 1e9 << "B");
    CHECK(std::abs(c.total_params() - params) / params < 0.02);
  }
}

TEST_CASE("field families: Llama GQA + SwiGLU, GPT-2 names with dropout") {
  const auto llama = hetsim::load_transformer_config(config_path("llama-3-70b"));
  CHECK(llama.num_kv_heads == 8);
  CHECK(llama.mlp == hetsim::MlpKind::kSwiGlu);
  CHECK(llama.norm == hetsim::NormKind::kRmsNorm);
  CHECK_FALSE(llama.has_dropout);
  CHECK_FALSE(llama.tied_embeddings);
  const auto gpt3 = hetsim::load_transformer_config(config_path("gpt3-175b"));
  CHECK(gpt3.hidden_size == 12288);
  CHECK(gpt3.ffn_hidden_size == 4 * 12288);  // n_inner null means 4h
  CHECK(gpt3.num_kv_heads == 96);
  CHECK(gpt3.has_dropout);
  CHECK(gpt3.tied_embeddings);
  CHECK(gpt3.mlp == hetsim::MlpKind::kGelu);
  const auto neox = hetsim::load_transformer_config(write_temp(
      "neox", R"({"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 100, "hidden_act": "gelu",
      "attention_dropout": 0.1, "hidden_dropout": 0.1})"));
  CHECK(neox.norm == hetsim::NormKind::kLayerNorm);
  CHECK(neox.has_dropout);
  CHECK_FALSE(neox.tied_embeddings);
}

TEST_CASE("Gemma 2's GeLU MLP is gated: 9.24B parameters, not 7.08B") {
  // google/gemma-2-9b config.json (Hugging Face hub); published: 8,324,201,984 non-embedding +
  // 917,504,000 embedding parameters = 9.24B (Gemma 2 report, arXiv:2408.00118, Table 2).
  const auto gemma = hetsim::load_transformer_config(write_temp(
      "gemma-2-9b", R"({"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336,
      "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
      "vocab_size": 256000, "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
      "sliding_window": 4096, "tie_word_embeddings": true, "rms_norm_eps": 1e-06,
      "max_position_embeddings": 8192, "rope_theta": 10000.0})"));
  CHECK(gemma.mlp == hetsim::MlpKind::kSwiGlu);  // gated: three GEMMs
  MESSAGE("gemma-2-9b: " << gemma.total_params() / 1e9 << "B parameters, published 9.24B");
  CHECK(std::abs(gemma.total_params() - 9.2417e9) / 9.2417e9 < 0.001);
  // A GeLU model whose MLP is not gated stays ungated.
  const auto neox = hetsim::load_transformer_config(write_temp(
      "neox-gelu", R"({"model_type": "gpt_neox", "hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 100, "hidden_act": "gelu"})"));
  CHECK(neox.mlp == hetsim::MlpKind::kGelu);
}

TEST_CASE("published parameter counts of more families: Mistral, Qwen2.5, Phi-3") {
  // Hugging Face config.json of mistralai/Mistral-7B-v0.1 (7.24B), Qwen/Qwen2.5-7B (7.61B: 7.62B
  // on its model card) and microsoft/Phi-3-mini-4k-instruct (3.82B); each family's MLP is gated.
  const std::pair<const char*, std::pair<const char*, double>> families[] = {
      {"mistral-7b", {R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "hidden_act": "silu", "tie_word_embeddings": false, "sliding_window": 4096})", 7.24e9}},
      {"qwen2.5-7b", {R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "hidden_act": "silu", "tie_word_embeddings": false})", 7.615e9}},
      {"phi-3-mini", {R"({"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32064,
        "hidden_act": "silu", "tie_word_embeddings": false})", 3.82e9}}};
  for (const auto& [name, text_and_count] : families) {
    const std::string family = name;
    CAPTURE(family);
    const auto c = hetsim::load_transformer_config(write_temp(name, text_and_count.first));
    CHECK(c.mlp == hetsim::MlpKind::kSwiGlu);
    MESSAGE(family << ": " << c.total_params() / 1e9 << "B parameters, published " << text_and_count.second / 1e9 << "B");
    CHECK(std::abs(c.total_params() - text_and_count.second) / text_and_count.second < 0.005);
  }
}

TEST_CASE("a multimodal config's language model is read from its text_config") {
  // Before: "/hidden_size: got nothing (missing)" for every Llava- or Gemma-3-style config.
  const auto path = write_temp("llava-like", R"({"model_type": "llava", "image_token_index": 32000,
      "vision_config": {"hidden_size": 1024},
      "text_config": {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32, "vocab_size": 32064}})");
  const auto c = hetsim::load_transformer_config(path);
  CHECK(c.hidden_size == 4096);
  CHECK(c.num_layers == 32);
  CHECK(c.mlp == hetsim::MlpKind::kSwiGlu);
  CHECK(std::find(c.ignored_fields.begin(), c.ignored_fields.end(),
                  "vision_config: not modeled (beside the nested text_config)") != c.ignored_fields.end());
  // Errors inside it name their path under /text_config.
  const auto bad = write_temp("llava-bad", R"({"text_config": {"hidden_size": 64, "num_attention_heads": 0}})");
  CHECK(message_of(bad).find(bad + ": /text_config/") == 0);
}

TEST_CASE("missing and ill-typed fields name the file and JSON path") {
  const auto missing = write_temp("missing", R"({"hidden_size": 64, "num_attention_heads": 4})");
  CHECK(message_of(missing) == missing + ": /num_hidden_layers: got nothing (missing); expected a value "
                                         "for required member \"num_hidden_layers\"");
  const auto typed = write_temp("typed", R"({"n_embd": "768", "n_head": 12})");
  CHECK(message_of(typed) == typed + ": /n_embd: got \"768\"; expected an integer");
  const auto zero = write_temp("zero", R"({"n_embd": 768, "n_head": 0})");
  CHECK(message_of(zero) == zero + ": /n_head: got 0; expected an integer > 0");
  const auto neither = write_temp("neither", R"({"d_model": 512})");
  CHECK(message_of(neither) == neither + ": /hidden_size: got nothing (missing); expected \"hidden_size\" "
                                         "(Llama/Mistral/Qwen2/GPT-NeoX), \"n_embd\" (GPT-2) or a \"text_config\" "
                                         "holding one");
  const auto heads = write_temp("heads", R"({"n_embd": 100, "n_head": 3, "n_layer": 2, "vocab_size": 10,
      "n_positions": 8})");
  CHECK(message_of(heads) == heads + ": /n_head: got 3; expected a divisor of the hidden size 100");
  const auto act = write_temp("act", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 100, "hidden_act": "relu"})");
  CHECK(message_of(act) == act + ": /hidden_act: got \"relu\"; expected \"silu\", \"swiglu\" or a \"gelu\" variant");
}

TEST_CASE("a ...ForSequenceClassification config has a score head of its labels, not an LM head") {
  // transformers' GPT2ForSequenceClassification: score = Linear(h, num_labels, bias=False), with
  // num_labels = len(id2label) (PretrainedConfig). DS3Lab's GPipe runs train such a 2-class head
  // on a 28,996-word BERT vocabulary: before, the head was costed as a 28,996 x 2048 LM head
  // (59M parameters and 2 x 2048 x 2048 x 28996 FLOPs per sequence more on the last stage).
  const std::string gpt2 = R"({"architectures": ["GPT2ForSequenceClassification"], "model_type": "gpt2",
    "n_embd": 2048, "n_layer": 2, "n_head": 16, "n_positions": 2048, "vocab_size": 28996,
    "id2label": {"0": "NEGATIVE", "1": "POSITIVE"}})";
  const auto classifier = hetsim::load_transformer_config(write_temp("classifier.json", gpt2));
  CHECK(classifier.num_labels == 2);
  CHECK(classifier.output_width() == 2);
  CHECK_FALSE(classifier.tied_embeddings);
  CHECK(classifier.lm_head_params() == 2.0 * 2048);
  CHECK(classifier.ignored_fields.empty());
  const auto lm = hetsim::load_transformer_config(config_path("megatron-gpt-1.7b"));
  CHECK(lm.num_labels == 0);
  CHECK(lm.output_width() == lm.vocab_size);
  const std::string no_labels = R"({"architectures": ["LlamaForSequenceClassification"], "hidden_size": 256,
    "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000,
    "num_labels": 5})";
  CHECK(hetsim::load_transformer_config(write_temp("classifier5.json", no_labels)).num_labels == 5);
  const std::string bad = R"({"architectures": ["GPT2ForSequenceClassification"], "n_embd": 64, "n_layer": 1,
    "n_head": 4, "n_positions": 16, "vocab_size": 100, "id2label": []})";
  CHECK(message_of(write_temp("classifier_bad.json", bad)).find("/id2label: got []; expected an object of one "
                                                                 "entry per label") != std::string::npos);
}

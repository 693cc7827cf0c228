// HuggingFace config fields beyond the basic shape: an explicit head_dim, sliding-window
// attention, GPT-NeoX's parallel residual and rotary_pct, and the list of fields hetsim does not
// model. Each checked in closed form on a small hand-written config.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::rel;
using hetsim::test::write_temp;

hetsim::TransformerConfig load(const std::string& name, const std::string& text) {
  return hetsim::load_transformer_config(write_temp(name, text));
}

const hetsim::LayerOp* find(const std::vector<hetsim::LayerOp>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name == name) return &op;
  return nullptr;
}

// A Llama-family layer (no biases, no dropout), with the extra fields in `extra`.
std::string llama(const std::string& extra) {
  return R"({"hidden_size": 256, "num_attention_heads": 8, "num_key_value_heads": 2,
      "num_hidden_layers": 2, "intermediate_size": 512, "vocab_size": 1000)" + extra + "}";
}
}  // namespace

TEST_CASE("head_dim wider than hidden/heads sets every attention shape (Qwen3's 128 at 2048 x 32)") {
  // a = 8 heads, kv = 2, d = 64 (hidden 256 / 8 would be 32): QKV 256 x (8 + 4) * 64, output
  // 8 * 64 x 256; core FLOPs 2 x 2bs^2 a d / t; Q, K, V, context bytes by a d and kv d.
  const auto m = load("head_dim", llama(R"(, "head_dim": 64)"));
  CHECK(m.head_dim() == 64);
  const double h = 256, a = 8, kv = 2, d = 64;
  MESSAGE("attention params: expected " << h * (a + 2 * kv) * d + a * d * h << ", actual " << m.attention_params());
  CHECK(m.attention_params() == h * (a + 2 * kv) * d + a * d * h);
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.seq_length = 128;
  plan.micro_batch_size = 2;
  const double b = 2, s = 128, t = 2;
  const auto ops = hetsim::transformer_layer_ops(m, plan);
  CHECK(find(ops, "qkv_proj")->gemm.n == (a + 2 * kv) * d / t);
  CHECK(find(ops, "attention_out_proj")->gemm.k == a * d / t);
  CHECK(find(ops, "attention_scores")->forward.flops == 2 * b * s * s * a * d / t);
  // Activations: norms and GEMM inputs by h, Q / K / V / context by a d and kv d, softmax s^2.
  const double e = 2, sbh = s * b * h, sbq = s * b * a * d;
  const double expected = e * (4 * sbh + sbq / t + 2 * sbq * kv / a / t + sbq / t + a * s * s * b / t +
                               3 * s * b * 512 / t);
  MESSAGE("activations: expected " << expected << " B, actual " << hetsim::layer_activation_bytes(m, plan) << " B");
  CHECK(rel(hetsim::layer_activation_bytes(m, plan), expected) < 1e-12);
}

TEST_CASE("sliding window: attention FLOPs and score memory over s x w, not s x s") {
  const auto full = load("no_window", llama(""));
  const auto windowed = load("window", llama(R"(, "sliding_window": 32)"));
  CHECK(windowed.sliding_window == 32);
  hetsim::ParallelPlan plan;
  plan.seq_length = 128;
  const double s = 128, w = 32, a = 8, d = 32, b = 1;
  const auto ops = hetsim::transformer_layer_ops(windowed, plan);
  const auto* core = find(ops, "attention_scores");
  MESSAGE("QK^T: expected " << 2 * b * s * w * a * d << " FLOPs, actual " << core->forward.flops);
  CHECK(rel(core->forward.flops, 2 * b * s * w * a * d) < 1e-12);
  // Only the softmax output (2 B per score) is kept without dropout.
  const double saved = hetsim::layer_activation_bytes(full, plan) - hetsim::layer_activation_bytes(windowed, plan);
  CHECK(rel(saved, 2 * a * b * s * (s - w)) < 1e-12);
  plan.flash_attention = true;
  const auto flash_ops = hetsim::transformer_layer_ops(windowed, plan);
  CHECK(rel(find(flash_ops, "flash_attention")->forward.flops, 4 * b * s * w * a * d) < 1e-12);
  // A window at least the sequence is full attention; Qwen2's switch and full-attention layers.
  plan.seq_length = 16;
  CHECK(hetsim::layer_activation_bytes(full, plan) == hetsim::layer_activation_bytes(windowed, plan));
  CHECK(load("window_off", llama(R"(, "sliding_window": 32, "use_sliding_window": false)")).sliding_window == 0);
  CHECK(load("window_layers", llama(R"(, "sliding_window": 32, "max_window_layers": 2)")).sliding_window == 0);
  const auto mixed = write_temp("window_mixed", llama(R"(, "sliding_window": 32, "max_window_layers": 1)"));
  CHECK(hetsim::test::message_of(mixed) ==
        mixed + ": /max_window_layers: got 1; expected 0 or >= num_hidden_layers (sliding-window "
                "layers mixed with full ones are not modeled)");
}

TEST_CASE("GPT-NeoX parallel residual: one input kept, one residual add, one forward reduction") {
  const std::string neox = R"({"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 8,
      "num_hidden_layers": 2, "intermediate_size": 1024, "vocab_size": 1000, "hidden_act": "gelu")";
  const auto parallel = load("neox_parallel", neox + "}");
  const auto serial = load("neox_serial", neox + R"(, "use_parallel_residual": false})");
  CHECK(parallel.parallel_residual);
  CHECK_FALSE(serial.parallel_residual);
  hetsim::ParallelPlan plan;
  plan.tp = 4;
  plan.seq_length = 64;
  const double sbh = 64 * 256, t = 4;
  // The post-attention norm reads the layer input, already kept for the input norm.
  const double kept = hetsim::layer_activation_bytes(serial, plan) - hetsim::layer_activation_bytes(parallel, plan);
  MESSAGE("activations saved: expected " << 2 * sbh << " B, actual " << kept << " B");
  CHECK(kept == 2 * sbh);
  const auto ops = hetsim::transformer_layer_ops(parallel, plan);
  CHECK(find(ops, "parallel_residual_add") != nullptr);
  CHECK(find(ops, "attention_residual_add") == nullptr);
  CHECK(find(ops, "parallel_residual_add")->forward.bytes == 2 * 4 * sbh);  // reads 3, writes 1
  // One all-reduce forward (the branch outputs summed first), two backward.
  const hetsim::TensorParallelLinks links{100e9, 0};
  const auto c = hetsim::cost_chunk(parallel, plan, hetsim::test::unit_gpu(), {0, 1, false, false}, links);
  const double ar_bytes = 2 * (t - 1) / t * 2 * sbh;
  CHECK(rel(c.tp_bytes_forward, ar_bytes) < 1e-12);
  CHECK(rel(c.tp_bytes_backward, 2 * ar_bytes) < 1e-12);
}

TEST_CASE("rotary_pct 0 means learned positions of max_position_embeddings rows") {
  const std::string neox = R"({"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 8,
      "num_hidden_layers": 2, "intermediate_size": 1024, "vocab_size": 1000, "hidden_act": "gelu",
      "max_position_embeddings": 512)";
  const auto rotary = load("neox_rotary", neox + R"(, "rotary_pct": 0.25})");
  const auto learned = load("neox_learned", neox + R"(, "rotary_pct": 0})");
  CHECK(rotary.learned_positions == 0);
  CHECK(learned.learned_positions == 512);
  CHECK(learned.embedding_params() - rotary.embedding_params() == 512.0 * 256);
  const auto bad = write_temp("neox_rotary_bad", neox + R"(, "rotary_pct": 1.5})");
  CHECK(hetsim::test::message_of(bad) == bad + ": /rotary_pct: got 1.5; expected a fraction in [0, 1]");
}

TEST_CASE("fields hetsim does not model are listed, never dropped in silence") {
  const auto m = load("ignored", llama(R"(, "mlp_bias": true, "qk_layernorm": true,
      "rope_theta": 10000, "torch_dtype": "bfloat16")"));
  const std::vector<std::string> expected = {"mlp_bias: MLP biases are not modeled",
                                             "qk_layernorm: not modeled"};
  CHECK(m.ignored_fields == expected);
  for (const char* name : {"llama-2-7b", "llama-3-8b", "llama-3.2-1b", "gpt3-175b"}) {
    const auto shipped = hetsim::load_transformer_config(hetsim::test::config_path(name));
    INFO(name);
    CHECK(shipped.ignored_fields.empty());
  }
  const auto mixtral = hetsim::load_transformer_config(hetsim::test::config_path("mixtral-8x7b"));
  CHECK(mixtral.ignored_fields == std::vector<std::string>{"router_aux_loss_coef: not modeled"});
}

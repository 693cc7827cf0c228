// Multi-head latent attention (DeepSeek-V2 section 2.1, DeepSeek-V3 section 2.1.1) as
// Megatron-core's MLASelfAttention runs it: FLOPs per token in closed form, the parameters one
// tensor-parallel rank holds (down-projections duplicated, up- and output projections split by
// heads), the activation bytes kept for backward, the TP collectives, and bad MLA fields.
#include <doctest/doctest.h>

#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "models/tp_collectives.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::forward_flops;
using hetsim::test::message_of;
using hetsim::test::op_named;
using hetsim::test::unit_gpu;
using hetsim::test::write_temp;

// A small dense model with MLA: h = 64, 4 heads, q latent 16, kv latent 8, nope 8, rope 4,
// v 6, SwiGLU MLP of 96.
const char* kMlaHead = R"("hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
    "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 100, "hidden_act": "silu",
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 6)";
hetsim::TransformerConfig small_mla(const std::string& name, const std::string& latents) {
  return hetsim::load_transformer_config(write_temp(name, fmt::format("{{{}, {}}}", kMlaHead, latents)));
}
}  // namespace

TEST_CASE("MLA forward FLOPs per token: 2 x (projection weights) + 2 x keys x heads x (192 + 128)-style core") {
  // Per token, forward: every projection 2 x its weights (h*q_lora, q_lora*a*(nope+rope),
  // h*(kv_lora+rope), kv_lora*a*(nope+v), a*v*h), the SwiGLU MLP 2*3*h*f, and the attention
  // core QK^T over the query/key width and PV over the value width, 2*s*a*(dk + dv) (the whole
  // s x s square, as the project counts attention).
  const auto m = small_mla("mla_flops", R"("q_lora_rank": 16, "kv_lora_rank": 8)");
  hetsim::ParallelPlan plan;
  plan.seq_length = 32;
  plan.micro_batch_size = 2;
  plan.flash_attention = true;
  const double h = 64, a = 4, ql = 16, kl = 8, nope = 8, rope = 4, v = 6, f = 96, s = 32, b = 2;
  const double projections = h * ql + ql * a * (nope + rope) + h * (kl + rope) + kl * a * (nope + v) + a * v * h;
  const double core = 2 * s * a * ((nope + rope) + v);
  const double expected = b * s * (2 * projections + 2 * 3 * h * f + core);
  const double actual = forward_flops(hetsim::transformer_layer_ops(m, plan));
  MESSAGE("expected " << expected << " FLOPs, actual " << actual);
  CHECK(actual == expected);
  // The projections' weights are the layer's attention parameters less the two latent norms.
  CHECK(m.attention_params() == projections + ql + kl);
  // Unfused attention does the same FLOPs.
  plan.flash_attention = false;
  CHECK(forward_flops(hetsim::transformer_layer_ops(m, plan)) == expected);
  // No query latent (DeepSeek-V2-Lite): the query projection straight from h.
  const auto lite = small_mla("mla_lite", R"("q_lora_rank": null, "kv_lora_rank": 8)");
  plan.flash_attention = true;
  const double lite_projections = h * a * (nope + rope) + h * (kl + rope) + kl * a * (nope + v) + a * v * h;
  CHECK(forward_flops(hetsim::transformer_layer_ops(lite, plan)) ==
        b * s * (2 * lite_projections + 2 * 3 * h * f + core));
  CHECK(lite.attention_params() == lite_projections + kl);
}

TEST_CASE("MLA under tensor parallelism: down-projections duplicated on the SP shard, up and output split by heads") {
  const auto m = small_mla("mla_tp", R"("q_lora_rank": 16, "kv_lora_rank": 8)");
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.sequence_parallel = true;
  plan.seq_length = 32;
  plan.micro_batch_size = 1;
  const auto ops = hetsim::transformer_layer_ops(m, plan);
  const auto& q_down = op_named(ops, "q_down_proj");
  CHECK(q_down.gemm.m == 16);  // b*s/t tokens
  CHECK(q_down.gemm.k == 64);
  CHECK(q_down.gemm.n == 16);  // the whole latent
  const auto& kv_down = op_named(ops, "kv_down_proj");
  CHECK(kv_down.gemm.m == 16);
  CHECK(kv_down.gemm.n == 8 + 4);
  const auto& q_up = op_named(ops, "q_up_proj");
  CHECK(q_up.gemm.m == 32);
  CHECK(q_up.gemm.n == 4 * 12 / 2);
  const auto& kv_up = op_named(ops, "kv_up_proj");
  CHECK(kv_up.gemm.k == 8);
  CHECK(kv_up.gemm.n == 4 * (8 + 6) / 2);
  const auto& out = op_named(ops, "attention_out_proj");
  CHECK(out.gemm.k == 4 * 6 / 2);
  // Parameters on one GPU: the down-projections and latent norms whole, the rest halved; the
  // layer norms whole, the MLP halved.
  const double replicated = 64 * 16 + 16 + 64 * 12 + 8;
  const double split = 16 * 4 * 12 + 8 * 4 * 14 + 4 * 6 * 64;
  CHECK(m.attention_replicated_params() == replicated);
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, {100e9, 0});
  CHECK(c.params == replicated + split / 2 + 2 * 64 + 3 * 64 * 96 / 2);
  // TP collectives, forward with SP: the q latent, kv latent and shared RoPE key gathered
  // (b*s x 16, 8, 4 bf16 elements), then the output's reduce-scatter; the MLP's as a dense layer.
  const auto sched = hetsim::layer_tp_schedule(m, plan);
  REQUIRE(sched.forward.size() == 6);
  CHECK(sched.forward[0].op == hetsim::TpCollective::kAllGather);
  CHECK(sched.forward[0].bytes == 2.0 * 32 * 16);
  CHECK(sched.forward[1].bytes == 2.0 * 32 * 8);
  CHECK(sched.forward[2].bytes == 2.0 * 32 * 4);
  CHECK(sched.forward[3].op == hetsim::TpCollective::kReduceScatter);
  CHECK(sched.forward[3].bytes == 2.0 * 32 * 64);
}

TEST_CASE("MLA activation bytes: latents and their norms, Q and K of 192-style width, V and context of v") {
  // b = 1, s = 32, t = 2 with SP, bf16. Per GPU (models/activation_memory.cpp):
  //   input-norm input, down-projection input       2 * 2sbh/t
  //   q latent and its norm, kv latent and its norm 2 * 2sb(16 + 8)/t
  //   Q, K                                          2 * 2sb*a*(8+4)/t
  //   V, context                                    2 * 2sb*a*6/t
  //   flash log-sum-exp                             4asb/t; unfused: the softmax output 2as^2b/t
  //   MLP as a dense SwiGLU layer                   2 * 2sbh/t + 3 * 2sbf/t
  const auto m = small_mla("mla_act", R"("q_lora_rank": 16, "kv_lora_rank": 8)");
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.sequence_parallel = true;
  plan.seq_length = 32;
  plan.micro_batch_size = 1;
  plan.flash_attention = true;
  const double sb = 32, h = 64, t = 2, a = 4, f = 96;
  const double attention = 2 * 2 * sb * h / t + 2 * 2 * sb * (16 + 8) / t + 2 * 2 * sb * a * 12 / t +
                           2 * 2 * sb * a * 6 / t;
  const double mlp = 2 * 2 * sb * h / t + 3 * 2 * sb * f / t;
  CHECK(hetsim::layer_activation_bytes(m, plan) == attention + 4 * a * sb / t + mlp);
  plan.flash_attention = false;
  CHECK(hetsim::layer_activation_bytes(m, plan) == attention + 2 * a * sb * sb / t + mlp);
  plan.recompute = hetsim::Recompute::kSelective;
  CHECK(hetsim::layer_activation_bytes(m, plan) == attention + mlp);
  CHECK(hetsim::layer_recompute_transient_bytes(m, plan) == 2 * a * sb * sb / t);
  plan.recompute = hetsim::Recompute::kFull;
  CHECK(hetsim::layer_activation_bytes(m, plan) == 2 * sb * h / t);
  // What W still reads after B: the down-projections' input, the two latents (SP shards), the
  // output projection's input, the MLP's up and down inputs.
  plan.recompute = hetsim::Recompute::kNone;
  CHECK(hetsim::layer_weight_grad_bytes(m, plan) ==
        2 * sb * h / t + 2 * sb * (16 + 8) / t + 2 * sb * h / t + 2 * sb * a * 6 / t + 2 * sb * f / t);
}

TEST_CASE("bad MLA fields are InputErrors naming the file and JSON path") {
  const std::string head = kMlaHead;
  const auto negative_q = write_temp("mla_negative_q", "{" + head + R"(, "q_lora_rank": -1, "kv_lora_rank": 8})");
  CHECK(message_of(negative_q) == negative_q + ": /q_lora_rank: got -1; expected an integer in [0, 1048576]");
  const auto zero_kv = write_temp("mla_zero_kv", "{" + head + R"(, "q_lora_rank": 16, "kv_lora_rank": 0})");
  CHECK(message_of(zero_kv) == zero_kv + ": /kv_lora_rank: got 0; expected an integer > 0");
  const auto no_rope = write_temp("mla_no_rope", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 100, "kv_lora_rank": 8,
      "qk_nope_head_dim": 8, "v_head_dim": 6})");
  CHECK(message_of(no_rope) == no_rope + ": /qk_rope_head_dim: got nothing (missing); expected a value "
                                         "for required member \"qk_rope_head_dim\"");
  const auto text_v = write_temp("mla_text_v", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 100, "kv_lora_rank": 8,
      "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": "6"})");
  CHECK(message_of(text_v).rfind(text_v + ": /v_head_dim: got \"6\"", 0) == 0);
  const auto wide = write_temp("mla_wide", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 100, "kv_lora_rank": 8,
      "qk_nope_head_dim": 300000, "qk_rope_head_dim": 4, "v_head_dim": 6})");
  CHECK(message_of(wide) == wide + ": /num_attention_heads: got 4; expected num_attention_heads (4) x the "
                                   "widest MLA head <= 1048576");
}

TEST_CASE("MLA heads: each head its own key and value whatever num_key_value_heads says; h need not split into heads") {
  // transformers' DeepseekV3Attention reads no num_key_value_heads, and MLA's head widths are
  // its own (qk_nope + qk_rope, v), so 60 / 8 need not divide.
  const auto m = hetsim::load_transformer_config(write_temp("mla_heads", R"({"hidden_size": 60,
      "num_attention_heads": 8, "num_key_value_heads": 1, "num_hidden_layers": 2,
      "intermediate_size": 96, "vocab_size": 100, "kv_lora_rank": 8, "qk_nope_head_dim": 8,
      "qk_rope_head_dim": 4, "v_head_dim": 6})"));
  CHECK(m.num_kv_heads == 8);
  CHECK(m.query_key_head_dim() == 12);
  CHECK(m.value_head_dim() == 6);
  // Without MLA the same shape is refused.
  const auto plain = write_temp("mla_heads_plain", R"({"hidden_size": 60, "num_attention_heads": 8,
      "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 100})");
  CHECK(message_of(plain) == plain + ": /num_attention_heads: got 8; expected a divisor of the hidden size 60");
}

// DeepSeek-MoE's first_k_dense_replace: a MoE model whose first layers keep a dense MLP of
// intermediate_size. A chunk costs, holds and counts the FLOPs of the layers it actually holds;
// model FLOPs and parameter counts follow; bad DeepSeek-MoE fields are InputErrors.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::message_of;
using hetsim::test::unit_gpu;
using hetsim::test::write_temp;

// 8 layers, the first 3 dense (SwiGLU of 96), then MoE: 4 experts of 16, top-2, 2 shared
// experts (one shared MLP of 32), with MLA.
const char* kDeepSeekHead = R"("hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 4,
    "num_hidden_layers": 8, "intermediate_size": 96, "vocab_size": 100, "hidden_act": "silu",
    "q_lora_rank": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4,
    "v_head_dim": 6, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16)";
hetsim::TransformerConfig small_deepseek() {
  return hetsim::load_transformer_config(write_temp(
      "deepseek_small",
      fmt::format("{{{}{}}}", kDeepSeekHead, R"(, "n_shared_experts": 2, "first_k_dense_replace": 3, "moe_layer_freq": 1)")));
}
hetsim::ChunkCost chunk(const hetsim::TransformerConfig& m, int first, int count) {
  hetsim::ParallelPlan plan;
  plan.seq_length = 16;
  plan.flash_attention = true;
  return hetsim::cost_chunk(m, plan, unit_gpu(), {first, count, false, false}, {100e9, 0});
}
}  // namespace

TEST_CASE("a chunk of layers 0..5 holds 3 dense and 3 MoE layers: costs, FLOPs, bytes and params add up") {
  const auto m = small_deepseek();
  REQUIRE(m.first_dense_layers == 3);
  CHECK(m.shared_expert_ffn_hidden_size == 32);
  const auto dense = m.dense_layer_model();
  CHECK_FALSE(dense.is_moe());
  // One dense layer (layer 0) and one MoE layer (layer 3), each costed alone.
  const auto one_dense = chunk(m, 0, 1);
  const auto one_moe = chunk(m, 3, 1);
  const auto both = chunk(m, 0, 6);
  CHECK(one_dense.forward_flops != one_moe.forward_flops);
  CHECK(both.forward_flops == 3 * one_dense.forward_flops + 3 * one_moe.forward_flops);
  CHECK(both.backward_weight_flops == 3 * one_dense.backward_weight_flops + 3 * one_moe.backward_weight_flops);
  CHECK(both.forward_s == doctest::Approx(3 * one_dense.forward_s + 3 * one_moe.forward_s).epsilon(1e-12));
  CHECK(both.activation_bytes == 3 * one_dense.activation_bytes + 3 * one_moe.activation_bytes);
  CHECK(both.params == 3 * one_dense.params + 3 * one_moe.params);
  CHECK(both.expert_params == 3 * one_moe.expert_params);
  CHECK(one_dense.expert_params == 0);
  // Layer 2 is the last dense one, layer 3 the first MoE one.
  CHECK(chunk(m, 2, 1).params == one_dense.params);
  CHECK(chunk(m, 3, 5).params == 5 * one_moe.params);
  // A dense layer's parameters: MLA, two norms, the SwiGLU MLP of 96.
  CHECK(one_dense.params == m.attention_params() + 2 * 64 + 3 * 64 * 96);
  CHECK(one_moe.params == m.layer_params());
}

TEST_CASE("model FLOPs and parameter counts count the dense first layers as dense") {
  const auto m = small_deepseek();
  const auto dense = m.dense_layer_model();
  CHECK(m.total_params() ==
        3 * dense.layer_params() + 5 * m.layer_params() + m.embedding_params() + m.lm_head_params() + 64);
  CHECK(m.active_params() == 3 * dense.layer_active_params() + 5 * m.layer_active_params() +
                                 m.embedding_params() + m.lm_head_params() + 64);
  hetsim::ParallelPlan plan;
  plan.seq_length = 16;
  plan.global_batch_size = 4;
  const auto sum = [&](const hetsim::TransformerConfig& layer) {
    double flops = 0;
    for (const auto& op : hetsim::transformer_layer_ops(layer, plan))
      flops += op.forward.flops + op.backward_input.flops + op.backward_weight.flops;
    return flops;
  };
  double head = 0;
  for (const auto& op : hetsim::lm_head_ops(m, plan))
    head += op.forward.flops + op.backward_input.flops + op.backward_weight.flops;
  CHECK(hetsim::model_flops_per_iteration(m, plan) == 4 * (3 * sum(dense) + 5 * sum(m) + head));
}

TEST_CASE("bad DeepSeek-MoE fields are InputErrors naming the file and JSON path") {
  const std::string head = kDeepSeekHead;
  const auto freq = write_temp("deepseek_freq", "{" + head + R"(, "moe_layer_freq": 2})");
  CHECK(message_of(freq) == freq + ": /moe_layer_freq: got 2; expected 1 (every layer after the "
                                   "first_k_dense_replace ones MoE; dense layers among MoE ones are not modeled)");
  const auto all_dense = write_temp("deepseek_all_dense", "{" + head + R"(, "first_k_dense_replace": 8})");
  CHECK(message_of(all_dense) == all_dense + ": /first_k_dense_replace: got 8; expected an integer < "
                                             "num_hidden_layers (8), leaving a MoE layer");
  const auto negative = write_temp("deepseek_negative_dense", "{" + head + R"(, "first_k_dense_replace": -1})");
  CHECK(message_of(negative) == negative + ": /first_k_dense_replace: got -1; expected an integer in [0, 65536]");
  const auto two_counts = write_temp("deepseek_two_counts", "{" + head + R"(, "num_experts": 4})");
  CHECK(message_of(two_counts) == two_counts + ": /num_experts: got 4; expected no second expert count next "
                                               "to \"n_routed_experts\"");
  const auto topk = write_temp("deepseek_topk", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 8, "intermediate_size": 96, "vocab_size": 100, "n_routed_experts": 4,
      "num_experts_per_tok": 5, "moe_intermediate_size": 16})");
  CHECK(message_of(topk) == topk + ": /num_experts_per_tok: got 5; expected an integer <= n_routed_experts (4)");
  const auto shared = write_temp("deepseek_shared", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 8, "intermediate_size": 96, "vocab_size": 100, "n_routed_experts": 4,
      "num_experts_per_tok": 2, "moe_intermediate_size": 4194304, "n_shared_experts": 2})");
  CHECK(message_of(shared) == shared + ": /n_shared_experts: got 2; expected n_shared_experts x "
                                       "moe_intermediate_size <= 4194304");
  // DeepSeek-V2's default of no routed experts is a dense model.
  const auto none = hetsim::load_transformer_config(write_temp("deepseek_none", R"({"hidden_size": 64,
      "num_attention_heads": 4, "num_hidden_layers": 8, "intermediate_size": 96, "vocab_size": 100,
      "n_routed_experts": null, "first_k_dense_replace": 3})"));
  CHECK_FALSE(none.is_moe());
  CHECK(none.first_dense_layers == 0);
}

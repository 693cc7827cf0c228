// DeepSeek-V3's multi-token prediction (section 2.2) as Megatron-core's MultiTokenPredictionBlock
// runs it on the last pipeline stage: per depth the next tokens' embedding, two RMSNorms, the
// 2h -> h projection, one more (MoE) layer and the shared LM head and loss again. The chunk
// holding the LM head pays for it in time, FLOPs, memory and parameters; no other chunk does.
#include <doctest/doctest.h>

#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "models/tp_collectives.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::forward_flops;
using hetsim::test::message_of;
using hetsim::test::unit_gpu;
using hetsim::test::write_temp;

// 4 layers, the first dense, then MoE (4 experts of 16, top-2), MLA, two prediction depths.
hetsim::TransformerConfig with_mtp() {
  return hetsim::load_transformer_config(write_temp("mtp_small", R"({"hidden_size": 64,
      "num_attention_heads": 4, "num_key_value_heads": 4, "num_hidden_layers": 4,
      "intermediate_size": 96, "vocab_size": 100, "hidden_act": "silu", "q_lora_rank": 16,
      "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4, "v_head_dim": 6,
      "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16,
      "n_shared_experts": 1, "first_k_dense_replace": 1, "num_nextn_predict_layers": 2,
      "tie_word_embeddings": false})"));
}
hetsim::ParallelPlan plan_tp2() {
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.sequence_parallel = true;
  plan.seq_length = 16;
  plan.micro_batch_size = 2;
  plan.flash_attention = true;
  return plan;
}
hetsim::ChunkCost chunk(const hetsim::TransformerConfig& m, const hetsim::ChunkSpan& span) {
  return hetsim::cost_chunk(m, plan_tp2(), unit_gpu(), span, {100e9, 0});
}
}  // namespace

TEST_CASE("the last stage pays for each depth: projection, one MoE layer, the LM head again") {
  const auto m = with_mtp();
  REQUIRE(m.mtp_depth == 2);
  auto plain = m;
  plain.mtp_depth = 0;
  const hetsim::ChunkSpan last{2, 2, false, true};
  const auto with = chunk(m, last);
  const auto without = chunk(plain, last);
  const auto plan = plan_tp2();
  // Forward FLOPs per depth: 2 x tokens x 2h x h/t for the projection, a MoE layer's, the head's.
  const double tokens = 2 * 16, h = 64, t = 2, V = 100;
  const double layer = forward_flops(hetsim::transformer_layer_ops(m, plan));
  const double head = 2 * tokens * h * V / t;
  CHECK(with.forward_flops - without.forward_flops == 2 * (2 * tokens * 2 * h * h / t + layer + head));
  CHECK(with.forward_s > without.forward_s);
  CHECK(with.backward_input_s > without.backward_input_s);
  CHECK(with.layers == without.layers + 2);
  // Parameters on one GPU: per depth three RMSNorms (whole), the projection (halved) and a MoE
  // layer's share; and the copy of the embedding table Megatron keeps on the last stage.
  const auto one_moe_layer = chunk(plain, {2, 1, false, false});
  CHECK(with.params - without.params == 2 * (3 * h + 2 * h * h / t + one_moe_layer.params) + V * h / t);
  CHECK(with.expert_params - without.expert_params == 2 * one_moe_layer.expert_params);
  // Activations per depth: the norms' inputs and the projection's [b*s, 2h] input (SP shards,
  // bf16), a MoE layer's, and the LM head's (its input, final-norm input, fp32 logits).
  const double seq_h = tokens / t * h;
  const double expected = 2 * (2 * seq_h * (1 + 1 + 2) + hetsim::layer_activation_bytes(m, plan) +
                               hetsim::lm_head_activation_bytes(m, plan));
  CHECK(with.activation_bytes - without.activation_bytes == doctest::Approx(expected).epsilon(1e-12));
  // A stage without the LM head is untouched.
  const hetsim::ChunkSpan first{0, 2, true, false};
  CHECK(chunk(m, first).forward_s == chunk(plain, first).forward_s);
  CHECK(chunk(m, first).params == chunk(plain, first).params);
  // Holding the embedding too (pp 1), the last stage needs no copy of it.
  const hetsim::ChunkSpan whole{0, 4, true, true};
  CHECK(chunk(m, whole).params - chunk(plain, whole).params ==
        2 * (3 * h + 2 * h * h / t + one_moe_layer.params));
}

TEST_CASE("MTP's TP collectives: embedding reduce-scatter, projection input gathered, its output gathered") {
  // SP, b*s = 32 tokens of h = 64 bf16: the embedding's reduce-scatter (4 KiB), the projection's
  // [b*s, 2h] input all-gathered (8 KiB), its h/t-wide output all-gathered to [b*s, h] (4 KiB).
  const auto s = hetsim::mtp_input_tp_schedule(with_mtp(), plan_tp2());
  REQUIRE(s.forward.size() == 3);
  CHECK(s.forward[0].op == hetsim::TpCollective::kReduceScatter);
  CHECK(s.forward[0].bytes == 2.0 * 32 * 64);
  CHECK(s.forward[1].op == hetsim::TpCollective::kAllGather);
  CHECK(s.forward[1].bytes == 2.0 * 32 * 128);
  CHECK(s.forward[2].op == hetsim::TpCollective::kAllGather);
  CHECK(s.forward[2].bytes == 2.0 * 32 * 64);
  // Backward: the embedding's gradient gathered, the projection's input re-gathered beside its
  // dgrad and its input gradient reduce-scattered, the scatter's gradient gathered.
  REQUIRE(s.backward.size() == 4);
  CHECK(s.backward[1].bytes == 2.0 * 32 * 128);
  CHECK(s.backward[2].op == hetsim::TpCollective::kReduceScatter);
  CHECK(s.backward[3].op == hetsim::TpCollective::kAllGather);
}

TEST_CASE("model FLOPs and parameter counts include each depth") {
  const auto m = with_mtp();
  auto plain = m;
  plain.mtp_depth = 0;
  CHECK(m.total_params() - plain.total_params() == 2 * m.mtp_module_params());
  CHECK(m.mtp_module_params() == 3 * 64 + 2 * 64 * 64 + m.layer_params());
  hetsim::ParallelPlan plan;
  plan.seq_length = 16;
  plan.global_batch_size = 2;
  double per_depth = 0;
  for (const auto& ops : {hetsim::mtp_input_ops(m, plan), hetsim::transformer_layer_ops(m, plan),
                          hetsim::lm_head_ops(m, plan)})
    for (const auto& op : ops) per_depth += op.forward.flops + op.backward_input.flops + op.backward_weight.flops;
  CHECK(hetsim::model_flops_per_iteration(m, plan) - hetsim::model_flops_per_iteration(plain, plan) ==
        doctest::Approx(2 * 2 * per_depth).epsilon(1e-12));
}

TEST_CASE("a bad num_nextn_predict_layers is an InputError naming the file and JSON path") {
  const auto bad = write_temp("mtp_negative", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 4, "intermediate_size": 96, "vocab_size": 100, "num_nextn_predict_layers": -1})");
  CHECK(message_of(bad) == bad + ": /num_nextn_predict_layers: got -1; expected an integer in [0, 65536]");
}

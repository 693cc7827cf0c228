// Mixture-of-Experts models: HuggingFace MoE configs (Mixtral, Qwen2-MoE), total and active
// parameter counts against the published figures, MoE FLOPs against the dense formula, the
// expert-parallel all-to-all, the activation bytes a MoE layer keeps, and the errors for MoE
// shapes and plans that cannot be modeled.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.hpp"
#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::config_path;
using hetsim::test::message_of;
using hetsim::test::rel;
using hetsim::test::unit_gpu;
using hetsim::test::write_temp;
hetsim::TransformerConfig mixtral() { return hetsim::load_transformer_config(config_path("mixtral-8x7b")); }
std::string plan_error_of(const hetsim::TransformerConfig& m, const hetsim::ParallelPlan& plan,
                          const hetsim::ExpertParallelLinks& ep_links) {
  try {
    hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, {100e9, 0}, ep_links);
  } catch (const hetsim::PlanError& e) {
    return e.what();
  }
  return "(no error)";
}
double round_to_tenth_billion(double x) { return std::round(x / 1e8) / 10; }
// A Mixtral-shaped head of a config.json; tests append their MoE fields.
const char* kHead = R"("hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
    "intermediate_size": 256, "vocab_size": 100, "hidden_act": "silu")";
}  // namespace

TEST_CASE("Mixtral 8x7B: 46.7B parameters, 12.9B active per token (Mistral AI, 'Mixtral of experts', arXiv:2401.04088)") {
  const auto m = mixtral();
  CHECK(m.num_experts == 8);
  CHECK(m.experts_per_token == 2);
  CHECK(m.expert_ffn_hidden_size == 14336);  // Mixtral's experts are intermediate_size wide
  CHECK(m.shared_expert_ffn_hidden_size == 0);
  // Per layer: attention 4096*(4096 + 2*1024) + 4096*4096, 8 experts of 3*4096*14336, router
  // 4096*8, two RMSNorms; embedding and untied LM head 32000*4096 each; final norm 4096.
  const double attention = 4096.0 * 6144 + 4096.0 * 4096, expert = 3.0 * 4096 * 14336;
  const double outside = 2 * 32000.0 * 4096 + 4096;
  const double layer = attention + 8 * expert + 4096.0 * 8 + 2 * 4096;
  const double active_layer = attention + 2 * expert + 4096.0 * 8 + 2 * 4096;
  MESSAGE("total " << m.total_params() / 1e9 << "B (published 46.7B), active " << m.active_params() / 1e9
                   << "B (published 12.9B)");
  CHECK(m.total_params() == 32 * layer + outside);
  CHECK(m.active_params() == 32 * active_layer + outside);
  CHECK(round_to_tenth_billion(m.total_params()) == 46.7);
  CHECK(round_to_tenth_billion(m.active_params()) == 12.9);
}

TEST_CASE("Qwen1.5-MoE-A2.7B (Qwen2-MoE fields, shared expert): 14.3B parameters, 2.7B activated (Qwen blog 'Qwen1.5-MoE')") {
  // config.json values of Qwen/Qwen1.5-MoE-A2.7B.
  const auto m = hetsim::load_transformer_config(write_temp("qwen15_moe", R"({"model_type": "qwen2_moe",
      "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16,
      "num_key_value_heads": 16, "vocab_size": 151936, "hidden_act": "silu", "num_experts": 60,
      "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
      "decoder_sparse_step": 1, "mlp_only_layers": [], "tie_word_embeddings": false})"));
  CHECK(m.num_experts == 60);
  CHECK(m.expert_ffn_hidden_size == 1408);
  CHECK(m.shared_expert_ffn_hidden_size == 5632);
  CHECK(m.shared_expert_gate);
  CHECK(m.shared_expert_params() == 3.0 * 2048 * 5632 + 2048);  // MLP + sigmoid gate (h x 1)
  MESSAGE("total " << m.total_params() / 1e9 << "B (published 14.3B), active " << m.active_params() / 1e9
                   << "B (published 2.7B)");
  CHECK(round_to_tenth_billion(m.total_params()) == 14.3);
  CHECK(round_to_tenth_billion(m.active_params()) == 2.7);
}

TEST_CASE("a dense model is unchanged: active = total, no expert parameters, no MoE ops") {
  const auto m = hetsim::load_transformer_config(config_path("llama-3-8b"));
  CHECK_FALSE(m.is_moe());
  CHECK(m.active_params() == m.total_params());
  CHECK(m.layer_expert_params() == 0);
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  for (const auto& op : hetsim::transformer_layer_ops(m, plan)) CHECK(op.name.find("moe") == std::string::npos);
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 2, false, false}, {100e9, 0});
  CHECK(c.expert_params == 0);
  CHECK(c.ep_comm_forward_s == 0);
}

TEST_CASE("MoE model FLOPs: 6 x active matmul parameters + attention, = the dense formula with k experts' width + router") {
  const auto m = mixtral();
  hetsim::ParallelPlan plan;
  plan.seq_length = 4096;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 8;
  const double tokens = 8.0 * 4096, l = 32, h = 4096, s = 4096, V = 32000;
  // Matmul parameters a token goes through: the layer's active ones less its norm scales, and
  // the LM head; the attention core adds QK^T and PV, 2 x 2sh per layer forward, x3 with backward.
  const double matmul_params = l * (m.layer_active_params() - 2 * h) + V * h;
  const double expected = tokens * (6 * matmul_params + l * 12 * s * h);
  const double actual = hetsim::model_flops_per_iteration(m, plan);
  MESSAGE("6N + attention: expected " << expected << " FLOPs, actual " << actual);
  CHECK(rel(actual, expected) < 1e-12);
  // The same model made dense with an MLP as wide as its k experts together does the same
  // FLOPs less the router's 6 * h * E per token and layer.
  hetsim::TransformerConfig dense = m;
  dense.num_experts = 0;
  dense.experts_per_token = 0;
  dense.ffn_hidden_size = 2 * 14336;
  const double router = tokens * l * 6 * h * 8;
  const double dense_flops = hetsim::model_flops_per_iteration(dense, plan);
  MESSAGE("dense " << dense_flops << " + router " << router << " vs MoE " << actual);
  CHECK(rel(actual, dense_flops + router) < 1e-12);
}

TEST_CASE("expert-parallel all-to-all: latency + (ep-1)/ep * b*s/t*k*h*2 bytes / bandwidth, 2 each way per layer") {
  const auto m = mixtral();
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.sequence_parallel = true;
  plan.dp = 8;
  plan.ep = 4;
  plan.seq_length = 4096;
  plan.micro_batch_size = 1;
  const hetsim::ExpertParallelLinks links{50e9, 20e-6};
  const double bytes = 4096.0 / 2 * 2 * 4096 * 2;  // tokens on the GPU x top-2 x h x bf16
  const double a2a = 20e-6 + 3.0 / 4 * bytes / 50e9;
  CHECK(hetsim::ep_all_to_all_bytes(m, plan) == bytes);
  CHECK(rel(hetsim::ep_all_to_all_seconds(bytes, 4, links), a2a) < 1e-12);
  CHECK(hetsim::ep_all_to_all_seconds(bytes, 1, links) == 0);
  const hetsim::ChunkSpan span{8, 4, false, false};
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), span, {300e9, 3e-6}, links);
  MESSAGE("4 layers: expected " << 4 * 2 * a2a << " s each way, actual " << c.ep_comm_forward_s << " / "
                                << c.ep_comm_backward_s << " s");
  CHECK(rel(c.ep_comm_forward_s, 4 * 2 * a2a) < 1e-12);
  CHECK(rel(c.ep_comm_backward_s, 4 * 2 * a2a) < 1e-12);
  // The all-to-alls are inside forward_s and backward_input_s: nearly free links leave the rest.
  const auto fast = hetsim::cost_chunk(m, plan, unit_gpu(), span, {300e9, 3e-6}, {1e30, 0});
  CHECK(rel(c.forward_s - fast.forward_s, c.ep_comm_forward_s) < 1e-9);
  CHECK(rel(c.backward_input_s - fast.backward_input_s, c.ep_comm_backward_s) < 1e-9);
  // Full recompute repeats the forward, its all-to-alls included.
  plan.recompute = hetsim::Recompute::kFull;
  const auto full = hetsim::cost_chunk(m, plan, unit_gpu(), span, {300e9, 3e-6}, links);
  const auto full_fast = hetsim::cost_chunk(m, plan, unit_gpu(), span, {300e9, 3e-6}, {1e30, 0});
  CHECK(rel(full.recompute_s - full_fast.recompute_s, 4 * 2 * a2a) < 1e-9);
}

TEST_CASE("expert parameters on one GPU: E/ep local experts, each sharded by tp") {
  const auto m = mixtral();
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.dp = 8;
  plan.ep = 4;
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 4, false, false}, {300e9, 0}, {50e9, 0});
  const double expert = 3.0 * 4096 * 14336;
  const double attention = 4096.0 * 6144 + 4096.0 * 4096;
  const double replicated = 2 * 4096 + 4096 * 8;  // norms and router
  CHECK(c.expert_params == 4 * (8 / 4) * expert / 2);
  CHECK(c.params == 4 * (attention / 2 + replicated) + c.expert_params);
}

TEST_CASE("MoE layer activation bytes: attention as Korthikanti, then router, permuted rows, expert tensors") {
  // Mixtral, b=1, s=4096, t=2 with SP, flash attention, bf16 (e=2), derivation in
  // models/activation_memory.cpp: per GPU
  //   attention: norm input, QKV input (2sbh/t each), Q, context (2sbh/t each), K, V (2sbh*kv/a/t
  //              each), fp32 log-sum-exp 4asb/t;
  //   MoE:       norm input, router input (2sbh/t each), probabilities 2(sb/t)E, routing map
  //              (sb/t)E, permuted inputs 2sbkh, SwiGLU gate, up and down input 3*2sbk*fe/t,
  //              expert outputs 2sbkh.
  const auto m = mixtral();
  hetsim::ParallelPlan plan;
  plan.tp = 2;
  plan.sequence_parallel = true;
  plan.flash_attention = true;
  plan.seq_length = 4096;
  plan.micro_batch_size = 1;
  const double sb = 4096, h = 4096, t = 2, a = 32, E = 8, k = 2, fe = 14336;
  const double attention = 4 * 2 * sb * h / t + 2 * 2 * sb * h * 8 / a / t + 4 * a * sb / t;
  const double moe = 2 * 2 * sb * h / t + 2 * sb / t * E + sb / t * E + 2 * sb * k * h +
                     3 * 2 * sb * k * fe / t + 2 * sb * k * h;
  const double actual = hetsim::layer_activation_bytes(m, plan);
  MESSAGE("expected " << attention + moe << " B, actual " << actual << " B");
  CHECK(rel(actual, attention + moe) < 1e-12);
  plan.recompute = hetsim::Recompute::kFull;
  CHECK(hetsim::layer_activation_bytes(m, plan) == 2 * sb * h / t);  // the layer input only
}

TEST_CASE("bad MoE fields are InputErrors naming the file and JSON path") {
  const std::string head = kHead;
  const auto topk = write_temp("topk", "{" + head + R"(, "num_local_experts": 4, "num_experts_per_tok": 5})");
  CHECK(message_of(topk) == topk + ": /num_experts_per_tok: got 5; expected an integer <= num_local_experts (4)");
  const auto no_topk = write_temp("no_topk", "{" + head + R"(, "num_local_experts": 4})");
  CHECK(message_of(no_topk) == no_topk + ": /num_experts_per_tok: got nothing (missing); expected a value "
                                         "for required member \"num_experts_per_tok\"");
  const auto zero_topk = write_temp("zero_topk", "{" + head + R"(, "num_experts": 4, "num_experts_per_tok": 0,
      "moe_intermediate_size": 32})");
  CHECK(message_of(zero_topk) == zero_topk + ": /num_experts_per_tok: got 0; expected an integer > 0");
  const auto negative = write_temp("negative", "{" + head + R"(, "num_experts": -8, "num_experts_per_tok": 2})");
  CHECK(message_of(negative) == negative + ": /num_experts: got -8; expected an integer in [0, 65536]");
  const auto no_width = write_temp("no_width", "{" + head + R"(, "num_experts": 8, "num_experts_per_tok": 2})");
  CHECK(message_of(no_width) == no_width + ": /moe_intermediate_size: got nothing (missing); expected a value "
                                           "for required member \"moe_intermediate_size\"");
  const auto both = write_temp("both", "{" + head + R"(, "num_experts": 8, "num_local_experts": 8,
      "num_experts_per_tok": 2})");
  CHECK(message_of(both) == both + ": /num_experts: got 8; expected no second expert count next to "
                                   "\"num_local_experts\"");
  const auto sparse_step = write_temp("sparse_step", "{" + head + R"(, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "decoder_sparse_step": 2})");
  CHECK(message_of(sparse_step) == sparse_step + ": /decoder_sparse_step: got 2; expected 1 (every layer MoE; "
                                                 "dense layers among MoE ones are not modeled)");
  const auto mlp_only = write_temp("mlp_only", "{" + head + R"(, "num_experts": 8, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "mlp_only_layers": [0]})");
  CHECK(message_of(mlp_only) == mlp_only + ": /mlp_only_layers: got [0]; expected [] (every layer MoE; "
                                           "dense layers among MoE ones are not modeled)");
  // An expert count of 0 is a dense model, as transformers reads it.
  const auto dense = hetsim::load_transformer_config(write_temp("dense", "{" + head + R"(, "num_experts": 0})"));
  CHECK_FALSE(dense.is_moe());
}

TEST_CASE("plans a MoE model cannot take are PlanErrors") {
  const auto m = mixtral();
  hetsim::ParallelPlan plan;
  plan.dp = 6;
  plan.ep = 3;
  CHECK(plan_error_of(m, plan, {50e9, 0}) == "expert parallelism 3 must divide the 8 experts of "
                                             "\"mistralai/Mixtral-8x7B-v0.1\"");
  plan.ep = 4;
  CHECK(plan_error_of(m, plan, {50e9, 0}) == "expert parallelism 4 must divide data parallelism 6 "
                                             "(expert-parallel groups are made of data-parallel replicas)");
  plan.dp = 8;
  CHECK(plan_error_of(m, plan, {}) == "expert parallelism 4 needs all-to-all links with a positive bandwidth");
  CHECK(plan_error_of(m, plan, {50e9, 0}) == "(no error)");
  const auto llama = hetsim::load_transformer_config(config_path("llama-3-8b"));
  CHECK(plan_error_of(llama, plan, {50e9, 0}) == "expert parallelism 4 needs a MoE model; "
                                                 "\"meta-llama/Meta-Llama-3-8B\" is dense");
}

// DeepSeek-V3's shipped config.json: the fields read (MLA, dense first layers, DeepSeek-MoE) and
// the parameter counts against DeepSeek-V3's technical report (arXiv:2412.19437, abstract and
// section 4.2: 671B total parameters, 37B activated per token, for the main model without the
// multi-token prediction module).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "models/transformer_config.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::config_path;
hetsim::TransformerConfig deepseek_v3() {
  return hetsim::load_transformer_config(config_path("deepseek-v3"));
}
}  // namespace

TEST_CASE("DeepSeek-V3 config: MLA widths, 3 dense layers then 58 MoE ones, 256 experts top-8, 1 shared expert") {
  const auto m = deepseek_v3();
  CHECK(m.num_layers == 61);
  CHECK(m.first_dense_layers == 3);
  CHECK(m.ffn_hidden_size == 18432);
  CHECK(m.num_experts == 256);
  CHECK(m.experts_per_token == 8);
  CHECK(m.expert_ffn_hidden_size == 2048);
  CHECK(m.shared_expert_ffn_hidden_size == 2048);
  CHECK_FALSE(m.shared_expert_gate);
  CHECK(m.is_mla());
  CHECK(m.mla.q_lora_rank == 1536);
  CHECK(m.mla.kv_lora_rank == 512);
  CHECK(m.query_key_head_dim() == 192);
  CHECK(m.value_head_dim() == 128);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.mtp_depth == 1);
  // Group-limited routing is the one thing said to be left out.
  REQUIRE(m.ignored_fields.size() == 2);
  CHECK(m.ignored_fields[0].rfind("n_group: group-limited routing is not modeled", 0) == 0);
  CHECK(m.ignored_fields[1].rfind("topk_group: group-limited routing is not modeled", 0) == 0);
}

TEST_CASE("DeepSeek-V3: 671B parameters, 37B activated per token (technical report, abstract), 14B more for MTP") {
  // Counted as the released checkpoint's tensors of the main model (transformers'
  // DeepseekV3ForCausalLM), h = 7168, 128 heads:
  //   MLA per layer   h*1536 + 1536 (q latent norm) + 1536*128*192 + h*(512+64) + 512 (kv latent
  //                   norm) + 512*128*(128+128) + 128*128*h                = 187,107,328
  //   norms per layer 2h
  //   dense MLP       3 * h * 18432 (layers 0-2)
  //   MoE             router h*256, 256 routed + 1 shared SwiGLU experts of 3 * h * 2048
  //                   (layers 3-60); the router's e_score_correction_bias (256 per layer) is
  //                   left out: Megatron-core keeps it as a buffer, not a trained parameter
  //   embedding, LM head (untied) 129280 * h each; final norm h.
  // The multi-token prediction module (section 2.2) comes on top: its embedding, hidden-state and
  // final norms (3h), its 2h x h projection and one MoE layer; it shares the embedding and LM
  // head.
  const auto m = deepseek_v3();
  const double main_total = m.total_params() - m.mtp_module_params();
  const double main_active = m.active_params() - m.mtp_module_active_params();
  const double h = 7168, expert = 3 * h * 2048;
  CHECK(m.attention_params() == 187107328.0);
  const double dense_layer = 187107328.0 + 2 * h + 3 * h * 18432;
  const double moe_layer = 187107328.0 + 2 * h + h * 256 + 257 * expert;
  const double moe_active = 187107328.0 + 2 * h + h * 256 + 9 * expert;
  const double ends = 2 * 129280 * h + h;
  const double mtp = 3 * h + 2 * h * h + moe_layer;
  CHECK(m.mtp_module_params() == mtp);
  CHECK(m.mtp_module_active_params() == 3 * h + 2 * h * h + moe_active);
  CHECK(main_total == 3 * dense_layer + 58 * moe_layer + ends);
  CHECK(main_active == 3 * dense_layer + 58 * moe_active + ends);
  MESSAGE("main model: total " << main_total << ", active " << main_active
                               << " (without the input embedding "
                               << main_active - m.embedding_params() << "); MTP module " << mtp);
  CHECK(main_total == 671026404352.0);
  CHECK(std::round(main_total / 1e9) == 671);
  // The report's 37B rounds the activated parameters that compute: the input embedding is a
  // lookup (36.63B without it; 37.55B with it).
  CHECK(main_active == 37552282624.0);
  CHECK(std::round((main_active - m.embedding_params()) / 1e9) == 37);
  // The MTP module: 11.6B; the released checkpoint (Hugging Face: 685B) stores its own copies
  // of the embedding and LM head beside it, 14B in all.
  CHECK(std::round(mtp / 1e8) == 116);
  const double checkpoint = m.total_params() + m.embedding_params() + m.lm_head_params();
  MESSAGE("with the checkpoint's MTP copies of embedding and head: " << checkpoint);
  CHECK(std::abs(checkpoint - 685e9) / 685e9 < 1e-3);
}

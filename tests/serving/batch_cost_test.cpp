// The cost of one serving iteration: token accounting, the KV-cache budget by hand for
// Llama-3-8B on an A100 80GB, decode attention bound by HBM bandwidth, and pipeline stages
// adding up to the unsplit replica plus their hand-overs.
#include <doctest/doctest.h>

#include <iostream>

#include "base/error.hpp"
#include "models/roofline.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/batch_cost.hpp"
#include "sim/serving/kv_cache.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;
using hetsim::test::shipped_model;

namespace {

StageHardware stage_on(const std::string& gpu, double tp_bandwidth = 230e9, double tp_latency = 8e-6) {
  StageHardware hw;
  hw.gpu = &catalog().at(gpu);
  hw.tp_links = {tp_bandwidth, tp_latency};
  return hw;
}

}  // namespace

TEST_CASE("iteration work counts causal query-key pairs and the keys each token reads") {
  IterationWork w;
  // A 4-token chunk after 10 cached tokens: query i (1..4) sees 10 + i keys: 40 + 10 pairs.
  w.add_prefill(4, 10, false);
  w.add_decode(99);  // one query against 99 cached keys and itself
  CHECK(w.prefill_tokens == 4);
  CHECK(w.prefill_attention_pairs == 50);
  CHECK(w.prefill_key_tokens == 14);
  CHECK(w.decode_tokens == 1);
  CHECK(w.decode_key_tokens == 100);
  CHECK(w.sampled_tokens == 1);  // the chunk does not finish its prompt; the decode samples
  CHECK(w.tokens() == 5);
}

TEST_CASE("KV-cache budget of Llama-3-8B on one A100 80GB, by hand") {
  const TransformerConfig model = shipped_model("llama-3-8b.json");
  const GpuSpec& a100 = catalog().at("a100-80gb");
  KvCacheLimits limits;
  limits.max_batched_tokens = 8192;
  limits.max_num_seqs = 256;
  const KvCacheBudget b = kv_cache_budget(model, Dtype::kBf16, 1, 32, true, true, a100, limits);
  // 2 (K and V) x 32 layers x 8 KV heads x 128 head_dim x 2 bytes = 131,072 bytes per token.
  CHECK(b.kv_bytes_per_token == 131072.0);
  // bf16 weights: 2 bytes x 8.03e9 parameters (untied embedding and LM head).
  CHECK(b.weights_bytes == doctest::Approx(2.0 * model.total_params()));
  CHECK(b.weights_bytes == doctest::Approx(16.06e9).epsilon(0.001));
  // Workspace: 2 x 8192 x (2 x 4096 + 3 x 14336) + 4 x 256 x 128256 bytes.
  CHECK(b.workspace_bytes == doctest::Approx(2.0 * 8192 * (2 * 4096 + 3 * 14336) + 4.0 * 256 * 128256));
  const double free_bytes = 0.9 * a100.hbm_bytes - b.weights_bytes - b.workspace_bytes;
  CHECK(b.blocks == static_cast<long>(free_bytes / (16 * 131072.0)));
  std::cout << "Llama-3-8B on A100 80GB: " << b.blocks << " blocks of 16 tokens ("
            << b.blocks * 16 << " tokens), weights " << b.weights_bytes / 1e9 << " GB\n";
  // Halving the KV heads per GPU with tp 2 halves the bytes per token and the weights.
  const KvCacheBudget b2 = kv_cache_budget(model, Dtype::kBf16, 2, 32, true, true, a100, limits);
  CHECK(b2.kv_bytes_per_token == 65536.0);
  CHECK(b2.weights_bytes == doctest::Approx(b.weights_bytes / 2));
  // Llama-3-70B does not fit one 80 GB GPU.
  const TransformerConfig big = shipped_model("llama-3-70b.json");
  CHECK_THROWS_WITH_AS(kv_cache_budget(big, Dtype::kBf16, 1, 80, true, true, a100, limits),
                       doctest::Contains("leave no room for the KV cache"), PlanError);
}

TEST_CASE("decode attention reads the KV cache: HBM-bound, linear in the context") {
  const TransformerConfig model = shipped_model("llama-3-8b.json");
  const ReplicaCost cost(model, Dtype::kBf16, 1, {stage_on("a100-80gb")});
  IterationWork short_ctx, long_ctx;
  for (int i = 0; i < 32; ++i) short_ctx.add_decode(1023);
  for (int i = 0; i < 32; ++i) long_ctx.add_decode(4095);
  const double t_short = cost.decode_attention_seconds(0, short_ctx);
  const double t_long = cost.decode_attention_seconds(0, long_ctx);
  const GpuSpec& a100 = catalog().at("a100-80gb");
  // One layer: 32 sequences x 4096 keys x 2 (K, V) x 8 heads x 128 x 2 bytes; its FLOPs at the
  // bf16 peak would take a fraction of that time.
  const double kv_bytes = 32.0 * 4096 * 2 * 8 * 128 * 2;
  const double flops = 4.0 * 32 * 128 * 32 * 4096;
  std::cout << "decode attention, 32 x 4096 keys: " << t_long * 1e6 << " us; HBM floor "
            << kv_bytes / a100.hbm_bytes_per_s * 1e6 << " us, FLOP floor "
            << flops / a100.peak(Dtype::kBf16) * 1e6 << " us\n";
  CHECK(t_long >= kv_bytes / a100.hbm_bytes_per_s);
  CHECK(flops / a100.peak(Dtype::kBf16) < 0.1 * t_long);
  // Four times the keys: more than three times the time (the per-kernel overhead stays fixed).
  CHECK(t_long > 3.0 * t_short);
  CHECK(t_long < 4.0 * t_short);
}

TEST_CASE("an iteration is every layer's ops, the embedding and the LM head; stages add up") {
  const TransformerConfig model = shipped_model("llama-3-8b.json");
  const ReplicaCost one(model, Dtype::kBf16, 1, {stage_on("a100-80gb")});
  IterationWork w;
  w.add_prefill(300, 0, true);
  w.add_decode(700);
  w.add_decode(80);
  const double layer = one.layer_token_seconds(0, 302) + one.prefill_attention_seconds(0, w) +
                       one.decode_attention_seconds(0, w);
  const double expected = 32 * layer + one.embedding_seconds(0, 302) + one.lm_head_seconds(0, 302, 3);
  CHECK(one.iteration_seconds(w) == doctest::Approx(expected).epsilon(1e-12));
  CHECK(one.transfer_seconds(0, w) == 0.0);
  // Two stages of 16 layers on the same GPU type, handing over 302 x 4096 x 2 bytes of hidden
  // states, then as many of residual, each over a 25 GB/s, 5 us route.
  StageHardware first = stage_on("a100-80gb");
  first.next_latency_s = 5e-6;
  first.next_bandwidth_bytes_per_s = 25e9;
  const ReplicaCost two(model, Dtype::kBf16, 1, {first, stage_on("a100-80gb")});
  CHECK(two.stage_layers(0) == 16);
  CHECK(two.stage_layers(1) == 16);
  const double hand_over = 2 * (5e-6 + 302.0 * 4096 * 2 / 25e9);
  CHECK(two.transfer_seconds(0, w) == doctest::Approx(hand_over).epsilon(1e-12));
  CHECK(two.iteration_seconds(w) == doctest::Approx(expected + hand_over).epsilon(1e-12));
  // An odd split gives the extra layer to the first stage.
  const ReplicaCost three(model, Dtype::kBf16, 1, {stage_on("a100-80gb"), stage_on("a100-80gb"), stage_on("a100-80gb")});
  CHECK(three.stage_layers(0) == 11);
  CHECK(three.stage_layers(2) == 10);
}

TEST_CASE("tensor parallelism splits the GEMMs and adds two all-reduces per layer") {
  const TransformerConfig model = shipped_model("llama-3-8b.json");
  const ReplicaCost tp1(model, Dtype::kBf16, 1, {stage_on("h100-sxm")});
  const ReplicaCost tp2(model, Dtype::kBf16, 2, {stage_on("h100-sxm", 450e9, 3e-6)});
  // At 4096 tokens the GEMMs are compute-bound: half the work each, plus the all-reduces of a
  // 4096 x 4096 x 2-byte activation: 2 x (2 (n-1)/n S/B + 2 (n-1) L) with n = 2.
  const double all_reduce = 4096.0 * 4096 * 2 / 450e9 + 2 * 3e-6;
  const double t1 = tp1.layer_token_seconds(0, 4096);
  const double t2 = tp2.layer_token_seconds(0, 4096);
  std::cout << "layer at 4096 tokens on H100: tp1 " << t1 * 1e3 << " ms, tp2 " << t2 * 1e3
            << " ms (of which all-reduces " << 2 * all_reduce * 1e3 << " ms)\n";
  CHECK(t2 - 2 * all_reduce == doctest::Approx(t1 / 2).epsilon(0.03));
}

TEST_CASE("models and splits serving cannot cost are refused") {
  const StageHardware a100 = stage_on("a100-80gb");
  const TransformerConfig mixtral = shipped_model("mixtral-8x7b.json");
  CHECK_THROWS_WITH_AS(ReplicaCost(mixtral, Dtype::kBf16, 1, {a100}), doctest::Contains("Mixture-of-Experts"),
                       PlanError);
  const TransformerConfig llama = shipped_model("llama-3-8b.json");
  TransformerConfig latent = llama;  // a dense model with DeepSeek-V3's latent attention
  latent.mla = {1536, 512, 128, 64, 128};
  CHECK_THROWS_WITH_AS(ReplicaCost(latent, Dtype::kBf16, 1, {a100}),
                       doctest::Contains("uses multi-head latent attention"), PlanError);
  CHECK_THROWS_WITH_AS(ReplicaCost(llama, Dtype::kBf16, 3, {a100}),
                       doctest::Contains("tp 3 must divide the 32 attention heads"), PlanError);
  CHECK_THROWS_WITH_AS(ReplicaCost(llama, Dtype::kBf16, 1, std::vector<StageHardware>(33, a100)),
                       doctest::Contains("pp 33 must be between 1 and the 32 layers"), PlanError);
  CHECK_THROWS_WITH_AS(ReplicaCost(llama, Dtype::kBf16, 1, {stage_on("v100-32gb")}),
                       doctest::Contains("v100-32gb has no bf16 GEMMs"), PlanError);
}

// The cost model against the published closed forms: Narayanan et al. (SC'21) model FLOPs and
// Korthikanti et al. (2022) Table 2 activation memory, for GPT-3 175B.
#include <doctest/doctest.h>

#include <cmath>

#include "models/chunk_cost.hpp"
#include "model_test_support.hpp"

namespace {
hetsim::TransformerConfig gpt3() {
  return hetsim::load_transformer_config(hetsim::test::config_path("gpt3-175b"));
}
using hetsim::test::rel;
}  // namespace

TEST_CASE("model FLOPs per iteration equal Narayanan et al. 2021, eq. 72Bslh^2(1 + s/6h + V/12lh)") {
  const auto m = gpt3();
  hetsim::ParallelPlan plan;
  plan.global_batch_size = 1536;
  plan.micro_batch_size = 1;
  plan.seq_length = 2048;
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  const double actual = hetsim::model_flops_per_iteration(m, plan);
  MESSAGE("expected " << expected << " FLOPs, actual " << actual);
  CHECK(rel(actual, expected) < 1e-9);
}

TEST_CASE("with full recompute, F + B + W + recompute FLOPs equal 96Bslh^2(1 + s/6h + V/16lh)") {
  const auto m = gpt3();
  hetsim::ParallelPlan plan;
  plan.recompute = hetsim::Recompute::kFull;
  plan.seq_length = 2048;
  plan.micro_batch_size = 1;
  const hetsim::GpuSpec gpu = [] {
    hetsim::GpuSpec g;
    g.key = "unit";
    g.peak_flops = {1e14, 1e14, 1e15, 1e15, 0};
    g.hbm_bytes_per_s = 2e12;
    return g;
  }();
  const hetsim::ChunkCost c = hetsim::cost_chunk(m, plan, gpu, {0, 96, true, true}, {});
  const double total = c.forward_flops + c.backward_input_flops + c.backward_weight_flops + c.recompute_flops;
  const double B = 1, s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  MESSAGE("expected " << expected << " FLOPs, actual " << total);
  CHECK(rel(total, expected) < 1e-9);
}

TEST_CASE("layer activation bytes equal Korthikanti et al. 2022 Table 2 for GPT-3 175B, b=1, s=2048, t=8") {
  const auto m = gpt3();
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
  hetsim::ParallelPlan plan;
  plan.seq_length = 2048;
  plan.micro_batch_size = 1;
  struct Row {
    const char* name;
    int tp;
    bool sp;
    hetsim::Recompute r;
    double expected;
  };
  const Row rows[] = {
      {"no parallelism", 1, false, hetsim::Recompute::kNone, sbh * (34 + 5 * a * s / h)},
      {"tensor parallel", 8, false, hetsim::Recompute::kNone, sbh * (10 + 24 / t + 5 * a * s / (h * t))},
      {"tensor + sequence parallel", 8, true, hetsim::Recompute::kNone, sbh * (34 / t + 5 * a * s / (h * t))},
      {"TP + selective recompute", 8, false, hetsim::Recompute::kSelective, sbh * (10 + 24 / t)},
      {"TP + SP + selective recompute", 8, true, hetsim::Recompute::kSelective, sbh * 34 / t},
      {"full recompute", 8, false, hetsim::Recompute::kFull, 2 * sbh},
      {"full recompute + SP", 8, true, hetsim::Recompute::kFull, 2 * sbh / t},
  };
  for (const Row& r : rows) {
    plan.tp = r.tp;
    plan.sequence_parallel = r.sp;
    plan.recompute = r.r;
    const double actual = hetsim::layer_activation_bytes(m, plan);
    MESSAGE(std::string(r.name) << ": expected " << r.expected << " B, actual " << actual << " B");
    CHECK(rel(actual, r.expected) < 1e-9);
  }
}

TEST_CASE("static memory: 2 + 4 + 12 bytes/param, optimizer sharded over dp (Megatron-LM dist optimizer doc)") {
  hetsim::ParallelPlan plan;
  plan.dp = 8;
  const double p = 1e9;
  CHECK(hetsim::static_memory(p, plan).total() == 18e9);
  plan.distributed_optimizer = true;
  const auto m = hetsim::static_memory(p, plan);
  CHECK(m.weights_bytes == 2e9);
  CHECK(m.gradients_bytes == 4e9);
  CHECK(rel(m.total(), (6 + 12.0 / 8) * p) < 1e-12);  // 6 + 12/d bytes per parameter
}

TEST_CASE("recomputed layer's transient bytes: Korthikanti Table 2's full layer minus what recompute keeps") {
  // GPT-3 175B, b=1, s=2048, t=8. Full recompute keeps 2sbh (2sbh/t with SP); the recomputed
  // layer holds sbh(10 + 24/t + 5as/(ht)) (sbh(34/t + 5as/(ht)) with SP). Selective keeps all but
  // the attention core's 5as^2b/t, which the recomputation brings back.
  const auto m = gpt3();
  hetsim::ParallelPlan plan;
  plan.tp = 8;
  plan.seq_length = 2048;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
  plan.recompute = hetsim::Recompute::kFull;
  const double full = sbh * (10 + 24 / t + 5 * a * s / (h * t)) - 2 * sbh;
  MESSAGE("full, TP: expected " << full << " B, actual " << hetsim::layer_recompute_transient_bytes(m, plan) << " B");
  CHECK(rel(hetsim::layer_recompute_transient_bytes(m, plan), full) < 1e-12);
  plan.sequence_parallel = true;
  const double full_sp = sbh * (34 / t + 5 * a * s / (h * t)) - 2 * sbh / t;
  CHECK(rel(hetsim::layer_recompute_transient_bytes(m, plan), full_sp) < 1e-12);
  plan.recompute = hetsim::Recompute::kSelective;
  CHECK(rel(hetsim::layer_recompute_transient_bytes(m, plan), 5 * a * s * s * b / t) < 1e-12);
  plan.recompute = hetsim::Recompute::kNone;
  CHECK(hetsim::layer_recompute_transient_bytes(m, plan) == 0.0);
}

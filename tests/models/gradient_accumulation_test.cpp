// Weight-gradient accumulation with and without Megatron-LM's gradient-accumulation fusion, in
// closed form on the unit GPU (1 PFLOP/s fp16/bf16, 2 TB/s, efficiency 1, no overhead). Fused,
// each wgrad GEMM reads and writes the fp32 main grad (8 B per weight). Unfused (Megatron-LM
// before 2022), the GEMM writes the gradient in the training dtype (e B) and one more kernel per
// weight adds it into the main grad every microbatch: reads the main grad (g B: 4 for fp32 main
// grads, else e) and the new gradient (e), writes the main grad (g).
#include <doctest/doctest.h>

#include <string>

#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::op_named;
using hetsim::test::rel;
using hetsim::test::unit_gpu;

// Megatron's 1.7B GPT (h 2304): QKV, attention output, MLP up and down, 12h^2 weights a layer.
hetsim::TransformerConfig gpt_1_7b() {
  return hetsim::load_transformer_config(hetsim::test::config_path("megatron-gpt-1.7b"));
}

hetsim::ParallelPlan plan_of(hetsim::Dtype dtype, bool fused) {
  hetsim::ParallelPlan p;
  p.micro_batch_size = 4;
  p.seq_length = 2048;
  p.dtype = dtype;
  p.gradient_accumulation_fusion = fused;
  return p;
}

const char* const kLinears[] = {"qkv_proj", "attention_out_proj", "mlp_up_proj", "mlp_down_proj"};
}  // namespace

TEST_CASE("unfused accumulation: the wgrad writes e B per weight and an add kernel follows it") {
  const auto m = gpt_1_7b();
  for (const auto dtype : {hetsim::Dtype::kBf16, hetsim::Dtype::kFp16}) {
    const double e = 2, g = dtype == hetsim::Dtype::kBf16 ? 4 : 2;  // fp16 keeps fp16 grads
    const auto fused = hetsim::transformer_layer_ops(m, plan_of(dtype, true));
    const auto unfused = hetsim::transformer_layer_ops(m, plan_of(dtype, false));
    CHECK(unfused.size() == fused.size() + 4);
    for (const char* name : kLinears) {
      const auto& f = op_named(fused, name);
      const auto& u = op_named(unfused, name);
      const double w = f.gemm.k * f.gemm.n;
      CHECK(f.weights == w);
      CHECK(rel(f.backward_weight.bytes - u.backward_weight.bytes, (8 - e) * w) < 1e-12);
      CHECK(u.backward_weight.flops == f.backward_weight.flops);
      const auto& add = op_named(unfused, std::string(name) + "_grad_accumulate");
      CHECK(add.forward.bytes == 0.0);
      CHECK(add.backward_input.bytes == 0.0);
      CHECK(rel(add.backward_weight.bytes, (2 * g + e) * w) < 1e-12);
    }
  }
}

TEST_CASE("unfused accumulation adds (2g + e) x 12h^2 / hbm to a layer's W on compute-bound wgrads") {
  // mbs 4 x 2048 tokens: every wgrad GEMM is compute-bound on the unit GPU fused or not (above
  // 500 FLOP per byte), so W grows by the add kernels alone.
  const auto m = gpt_1_7b();
  const double h = 2304, hbm = 2e12;
  for (const auto dtype : {hetsim::Dtype::kBf16, hetsim::Dtype::kFp16}) {
    const double e = 2, g = dtype == hetsim::Dtype::kBf16 ? 4 : 2;
    const auto fused = hetsim::cost_chunk(m, plan_of(dtype, true), unit_gpu(), {0, 1, false, false}, {});
    const auto unfused = hetsim::cost_chunk(m, plan_of(dtype, false), unit_gpu(), {0, 1, false, false}, {});
    const double expected = (2 * g + e) * 12 * h * h / hbm;
    MESSAGE("g = " << g << " B: W grows by " << unfused.backward_weight_s - fused.backward_weight_s
                                     << " s, expected " << expected << " s");
    CHECK(rel(unfused.backward_weight_s - fused.backward_weight_s, expected) < 1e-9);
    CHECK(unfused.forward_s == fused.forward_s);
    CHECK(unfused.backward_input_s == fused.backward_input_s);
    CHECK(unfused.backward_weight_flops == fused.backward_weight_flops);
  }
}

TEST_CASE("the LM head's wgrad is unfused too") {
  const auto m = gpt_1_7b();
  const auto ops = hetsim::lm_head_ops(m, plan_of(hetsim::Dtype::kBf16, false));
  const auto& head = op_named(ops, "lm_head");
  CHECK(rel(op_named(ops, "lm_head_grad_accumulate").backward_weight.bytes, 10 * head.weights) < 1e-12);
}

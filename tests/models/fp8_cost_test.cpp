// FP8 linear layers (--fp8-format, Transformer Engine's delayed scaling): GEMMs at the FP8 peak,
// the cast-transpose kernels around them, the per-chunk amax/scale update, and everything else
// left in bf16. Closed forms on a GPU with round figures (models/fp8_cost.hpp states the model).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include "models/chunk_cost.hpp"
#include "models/fp8_cost.hpp"
#include "models/op_cost.hpp"
#include "model_test_support.hpp"

namespace {

using hetsim::Dtype;
using hetsim::Fp8Format;
using hetsim::test::config_path;

// unit_gpu (1 PFLOP/s bf16, 2 TB/s, ideal curves) with a 2 PFLOP/s FP8 peak.
hetsim::GpuSpec fp8_gpu() {
  hetsim::GpuSpec g = hetsim::test::unit_gpu();
  g.peak_flops[static_cast<int>(Dtype::kFp8)] = 2e15;
  return g;
}

hetsim::ParallelPlan fp8_plan(Fp8Format format) {
  hetsim::ParallelPlan p;
  p.seq_length = 4096;
  p.global_batch_size = 64;  // 64 microbatches share each weight cast
  p.fp8 = format;
  return p;
}

}  // namespace

TEST_CASE("an FP8 linear layer: GEMMs at the FP8 peak plus its cast-transpose kernels") {
  // Y[m,n] = X[m,k] W[k,n] with bf16 operands, 4 microbatches per iteration. FP8 adds, per
  // element at 2 B read + 2 B written (FP8 copy and transpose): forward X (m*k) and a quarter of
  // W (k*n, cast once per iteration); backward-input dY (m*n). wgrad has no cast.
  const double m = 8192, k = 4096, n = 4096;
  const hetsim::GpuSpec gpu = fp8_gpu();
  const std::vector<hetsim::LayerOp> ops = {hetsim::linear_op("qkv_proj", m, k, n, 2.0)};
  const auto fp8 = hetsim::cost_ops(ops, gpu, Dtype::kBf16, nullptr, {Fp8Format::kHybrid, 4});
  const auto bf16 = hetsim::cost_ops(ops, gpu, Dtype::kBf16, nullptr);
  const double gemm_fp8 = 2 * m * k * n / 2e15;  // compute-bound: operand bytes / 2 TB/s is less
  const double forward = gemm_fp8 + 4 * (m * k + k * n / 4) / 2e12;
  const double backward_input = gemm_fp8 + 4 * m * n / 2e12;
  const double wgrad = std::max(gemm_fp8, (2 * (m * k + m * n) + 8 * k * n) / 2e12);
  std::printf("FP8 linear [%g x %g x %g]: forward expected %.4e s got %.4e s; dgrad expected %.4e s got "
              "%.4e s; wgrad expected %.4e s got %.4e s; bf16 forward %.4e s\n",
              m, k, n, forward, fp8[0].forward.seconds, backward_input, fp8[0].backward_input.seconds, wgrad,
              fp8[0].backward_weight.seconds, bf16[0].forward.seconds);
  CHECK(fp8[0].forward.seconds == doctest::Approx(forward).epsilon(1e-12));
  CHECK(fp8[0].backward_input.seconds == doctest::Approx(backward_input).epsilon(1e-12));
  CHECK(fp8[0].backward_weight.seconds == doctest::Approx(wgrad).epsilon(1e-12));
  CHECK(bf16[0].forward.seconds == doctest::Approx(2 * m * k * n / 1e15).epsilon(1e-12));
}

TEST_CASE("FP8 leaves the attention core, norms, activations and non-TE linears in bf16") {
  const hetsim::GpuSpec gpu = fp8_gpu();
  for (const char* name : {"llama-3-8b", "mixtral-8x7b"}) {
    const auto model = hetsim::load_transformer_config(config_path(name));
    for (const bool flash : {false, true}) {
      hetsim::ParallelPlan plan = fp8_plan(Fp8Format::kE4M3);
      plan.flash_attention = flash;
      const auto ops = hetsim::transformer_layer_ops(model, plan);
      const auto fp8 = hetsim::cost_ops(ops, gpu, Dtype::kBf16, nullptr, hetsim::fp8_linears(plan));
      const auto bf16 = hetsim::cost_ops(ops, gpu, Dtype::kBf16, nullptr);
      int in_fp8 = 0;
      for (std::size_t i = 0; i < ops.size(); ++i) {
        CAPTURE(ops[i].name);
        const bool te_linear = ops[i].op_class == hetsim::OpClass::kGemm && ops[i].name != "moe_router" &&
                               ops[i].name != "shared_expert_gate";
        CHECK(hetsim::runs_in_fp8(ops[i]) == te_linear);
        in_fp8 += te_linear ? 1 : 0;
        if (te_linear) {
          CHECK(fp8[i].forward.seconds < bf16[i].forward.seconds);
        } else {
          CHECK(fp8[i].forward.seconds == bf16[i].forward.seconds);
          CHECK(fp8[i].backward_input.seconds == bf16[i].backward_input.seconds);
        }
      }
      CHECK(in_fp8 == 4);  // QKV, attention output, MLP (or experts') up and down
    }
  }
}

TEST_CASE("the weights an FP8 cast reads: k*n for a linear, every local expert's for a grouped GEMM") {
  const auto mixtral = hetsim::load_transformer_config(config_path("mixtral-8x7b"));
  hetsim::ParallelPlan plan;
  plan.seq_length = 1024;
  plan.dp = 2;
  plan.ep = 2;  // 4 of the 8 experts on each GPU
  for (const auto& op : hetsim::transformer_layer_ops(mixtral, plan)) {
    if (op.name == "qkv_proj") CHECK(hetsim::linear_weight_elements(op, 2.0) == op.gemm.k * op.gemm.n);
    if (op.name == "expert_down_proj")
      CHECK(hetsim::linear_weight_elements(op, 2.0) == doctest::Approx(4 * op.gemm.k * op.gemm.n).epsilon(1e-12));
  }
}

TEST_CASE("the amax/scale update: one kernel per chunk forward and backward, fp32 per FP8 tensor") {
  // Per FP8 tensor (3 per linear forward: input, weight, output; 2 backward: the gradients) TE's
  // bulk update reads and writes the one-entry amax history and the scale and writes the inverse
  // scale: 5 fp32 = 20 B. Llama: 4 FP8 linears per layer; 2 layers.
  hetsim::GpuSpec gpu = fp8_gpu();
  gpu.efficiency.elementwise = {0.5, 2e-6};
  const auto model = hetsim::load_transformer_config(config_path("llama-3-8b"));
  const auto ops = hetsim::transformer_layer_ops(model, fp8_plan(Fp8Format::kHybrid));
  const double forward = 2 * 4 * 3 * 20 / (2e12 * 0.5) + 2e-6;
  const double backward = 2 * 4 * 2 * 20 / (2e12 * 0.5) + 2e-6;
  CHECK(hetsim::fp8_scale_update_seconds(ops, 2, false, gpu) == doctest::Approx(forward).epsilon(1e-12));
  CHECK(hetsim::fp8_scale_update_seconds(ops, 2, true, gpu) == doctest::Approx(backward).epsilon(1e-12));
}

TEST_CASE("the LM head and embedding stay in bf16 under FP8") {
  const hetsim::GpuSpec gpu = fp8_gpu();
  const auto model = hetsim::load_transformer_config(config_path("llama-3-8b"));
  const hetsim::TensorParallelLinks links{1e11, 1e-6};
  const hetsim::ChunkSpan ends{0, 0, true, true};
  hetsim::ParallelPlan bf16 = fp8_plan(Fp8Format::kNone);
  const hetsim::ParallelPlan fp8 = fp8_plan(Fp8Format::kHybrid);
  const auto a = hetsim::cost_chunk(model, bf16, gpu, ends, links);
  const auto b = hetsim::cost_chunk(model, fp8, gpu, ends, links);
  CHECK(a.forward_s == b.forward_s);
  CHECK(a.backward_input_s == b.backward_input_s);
  const hetsim::ChunkSpan layers{0, 2, false, false};
  CHECK(hetsim::cost_chunk(model, fp8, gpu, layers, links).forward_s <
        hetsim::cost_chunk(model, bf16, gpu, layers, links).forward_s);
}

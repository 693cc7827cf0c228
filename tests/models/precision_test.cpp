// A run's precision: its name, the check that a GPU has tensor cores for it (no fp32 fallback),
// and Megatron's bytes per parameter for bf16 and fp16 (docs/source/api-guide/dist_optimizer.md).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "base/error.hpp"
#include "models/chunk_cost.hpp"
#include "models/precision.hpp"
#include "models/roofline.hpp"
#include "model_test_support.hpp"

namespace {

using hetsim::Dtype;
using hetsim::Fp8Format;

const hetsim::GpuCatalog& catalog() {
  static const hetsim::GpuCatalog c = hetsim::GpuCatalog::load(std::string(HETSIM_SOURCE_DIR) + "/models/gpus");
  return c;
}

hetsim::ParallelPlan plan_with(Dtype dtype, Fp8Format fp8 = Fp8Format::kNone) {
  hetsim::ParallelPlan p;
  p.dtype = dtype;
  p.fp8 = fp8;
  return p;
}

std::string check_message(const std::string& gpu, const hetsim::ParallelPlan& plan) {
  try {
    hetsim::check_precision(catalog().at(gpu), plan);
  } catch (const hetsim::PlanError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("precision names follow Megatron's flags") {
  CHECK(hetsim::precision_name(plan_with(Dtype::kBf16)) == "bf16");
  CHECK(hetsim::precision_name(plan_with(Dtype::kFp16)) == "fp16");
  CHECK(hetsim::precision_name(plan_with(Dtype::kBf16, Fp8Format::kE4M3)) == "fp8-e4m3");
  CHECK(hetsim::precision_name(plan_with(Dtype::kBf16, Fp8Format::kHybrid)) == "fp8-hybrid");
  CHECK(hetsim::linear_gemm_dtype(plan_with(Dtype::kBf16, Fp8Format::kHybrid)) == Dtype::kFp8);
  CHECK(hetsim::linear_gemm_dtype(plan_with(Dtype::kFp16)) == Dtype::kFp16);
}

TEST_CASE("a GPU without the run's dtype is an error naming the GPU, the dtype and the flag") {
  CHECK(check_message("v100-32gb", plan_with(Dtype::kBf16)) ==
        "GPU type v100-32gb (NVIDIA V100 SXM2 32GB) has no bf16 tensor cores; train it with --fp16");
  CHECK(check_message("v100-32gb", plan_with(Dtype::kFp16)) == "(no error)");
  CHECK(check_message("a100-80gb", plan_with(Dtype::kBf16, Fp8Format::kHybrid)) ==
        "GPU type a100-80gb (NVIDIA A100 SXM4 80GB) has no fp8 tensor cores; drop --fp8-format hybrid to "
        "train it in bf16");
  CHECK(check_message("h100-sxm", plan_with(Dtype::kBf16, Fp8Format::kHybrid)) == "(no error)");
  CHECK(check_message("h100-sxm", plan_with(Dtype::kFp16, Fp8Format::kE4M3)) ==
        "--fp8-format e4m3 runs FP8 linear layers on a bf16 base; drop --fp16");
  CHECK(check_message("h100-sxm", plan_with(Dtype::kFp8)) ==
        "training dtype fp8 is not supported; expected bf16 (--bf16), fp16 (--fp16) or fp32 (--fp32), "
        "with FP8 linear layers through --fp8-format");
  CHECK(check_message("h100-sxm", plan_with(Dtype::kTf32, Fp8Format::kHybrid)) ==
        "--fp8-format hybrid runs FP8 linear layers on a bf16 base; drop --fp32");
}

TEST_CASE("fp32 training runs on every GPU: TF32 matmuls where there are TF32 tensor cores") {
  // Before: "training dtype fp32 is not supported". A V100 or a Turing card has no TF32, so
  // PyTorch's allow_tf32 leaves its matmuls on the fp32 pipes (15.7 TFLOP/s on a V100).
  CHECK(check_message("v100-32gb", plan_with(Dtype::kTf32)) == "(no error)");
  CHECK(check_message("a100-80gb", plan_with(Dtype::kFp32)) == "(no error)");
  CHECK(hetsim::precision_name(plan_with(Dtype::kTf32)) == "fp32-tf32");
  CHECK(hetsim::precision_name(plan_with(Dtype::kFp32)) == "fp32");
  const hetsim::GpuSpec& v100 = catalog().at("v100-32gb");
  const hetsim::GpuSpec& a100 = catalog().at("a100-80gb");
  CHECK(v100.matmul_dtype(Dtype::kTf32) == Dtype::kFp32);
  CHECK(a100.matmul_dtype(Dtype::kTf32) == Dtype::kTf32);
  const hetsim::KernelWork work{2e12, 1e6};
  const auto gemm = [&](const hetsim::GpuSpec& gpu, Dtype d) {
    return hetsim::kernel_time(hetsim::KernelKind::kGemm, work, gpu, d);
  };
  // A 2 TFLOP GEMM: the A100's TF32 peak is 8x its fp32 (156 against 19.5 TFLOP/s), so TF32
  // takes an eighth of the fp32 compute time; the V100 takes its fp32 time either way.
  std::printf("2 TFLOP GEMM: A100 tf32 %.4f s, fp32 %.4f s; V100 tf32 %.4f s, fp32 %.4f s\n",
              gemm(a100, Dtype::kTf32), gemm(a100, Dtype::kFp32), gemm(v100, Dtype::kTf32),
              gemm(v100, Dtype::kFp32));
  CHECK(gemm(v100, Dtype::kTf32) == gemm(v100, Dtype::kFp32));
  CHECK(gemm(a100, Dtype::kFp32) / gemm(a100, Dtype::kTf32) ==
        doctest::Approx(a100.peak(Dtype::kTf32) / a100.peak(Dtype::kFp32)).epsilon(0.01));
}

TEST_CASE("fp32 training keeps 4-byte weights and gradients and only Adam's m and v") {
  // Rajbhandari et al. (SC'20) section 3.1: fp32 Adam holds 4 + 4 + 8 = 16 bytes per parameter;
  // before, fp32 was refused, and mixed precision's 18 would have been counted.
  const double psi = 1e9;
  hetsim::ParallelPlan plan = plan_with(Dtype::kTf32);
  plan.dp = 4;
  const auto memory = hetsim::static_memory(psi, 0, plan);
  std::printf("fp32, dp 4: expected 16 GB, got %.3f GB (weights %.3f GB)\n", memory.total() / 1e9,
              memory.weights_bytes / 1e9);
  CHECK(memory.total() == 16 * psi);
  CHECK(memory.weights_bytes == 4 * psi);
  plan.distributed_optimizer = true;
  CHECK(hetsim::static_memory(psi, 0, plan).total() == (8 + 8.0 / 4) * psi);
}

TEST_CASE("the roofline never costs a GEMM at another dtype's peak") {
  // Before: a bf16 GEMM on a V100 fell back to the 15.7 TFLOP/s fp32 peak, 8x slower than its
  // fp16 tensor cores, and MFU divided by the bf16 peak of 0.
  const hetsim::GpuSpec& v100 = catalog().at("v100-32gb");
  const hetsim::KernelWork work{2e12, 1e6};
  CHECK_THROWS_WITH_AS(hetsim::kernel_time(hetsim::KernelKind::kGemm, work, v100, Dtype::kBf16),
                       "GPU type v100-32gb has no bf16 peak in the GPU catalog", hetsim::Error);
  const double fp16 = hetsim::kernel_time(hetsim::KernelKind::kGemm, work, v100, Dtype::kFp16);
  const auto& e = v100.efficiency;
  const double expected = hetsim::roofline_gemm_time(hetsim::curve_seconds(e.gemm_compute, 2e12, 125e12),
                                                     hetsim::curve_seconds(e.gemm_memory, 1e6, v100.hbm_bytes_per_s),
                                                     e.gemm_ridge_exponent);
  std::printf("V100 fp16 GEMM of 2 TFLOP: expected %.6f s, got %.6f s\n", expected, fp16);
  CHECK(fp16 == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("bytes per parameter: fp32 main grads for bf16, 2-byte grads for fp16 unless asked") {
  // Megatron's distributed-optimizer table: bf16 parameters with fp32 gradients 18 B (6 + 12/d
  // distributed), fp16 parameters and gradients 20 B (4 + 16/d distributed).
  const double psi = 1e9;
  hetsim::ParallelPlan plan = plan_with(Dtype::kBf16);
  plan.dp = 8;
  CHECK(plan.grads_in_fp32());
  CHECK(hetsim::static_memory(psi, 0, plan).total() == 18 * psi);
  plan.dtype = Dtype::kFp16;
  CHECK_FALSE(plan.grads_in_fp32());
  const auto fp16 = hetsim::static_memory(psi, 0, plan);
  std::printf("fp16, dp 8, no distributed optimizer: expected 20 GB, got %.3f GB (grads %.3f GB)\n",
              fp16.total() / 1e9, fp16.gradients_bytes / 1e9);
  CHECK(fp16.total() == 20 * psi);
  CHECK(fp16.gradients_bytes == 2 * psi);
  plan.distributed_optimizer = true;
  CHECK(hetsim::static_memory(psi, 0, plan).total() == (4 + 16.0 / 8) * psi);
  plan.accumulate_allreduce_grads_in_fp32 = true;
  CHECK(hetsim::static_memory(psi, 0, plan).total() == (6 + 12.0 / 8) * psi);
  CHECK(hetsim::bytes_per_param(plan).gradients == 4);
}

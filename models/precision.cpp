#include "models/precision.hpp"

#include "base/error.hpp"

namespace hetsim {

std::string precision_name(const ParallelPlan& plan) {
  if (plan.fp8 != Fp8Format::kNone) return std::string("fp8-") + to_string(plan.fp8);
  if (plan.dtype == Dtype::kTf32) return "fp32-tf32";
  return to_string(plan.dtype);
}

Dtype linear_gemm_dtype(const ParallelPlan& plan) {
  return plan.fp8 != Fp8Format::kNone ? Dtype::kFp8 : plan.dtype;
}

namespace {

// The flags of the training dtypes `gpu` has tensor cores for ("--bf16 or --fp16").
std::string supported_flags(const GpuSpec& gpu) {
  std::string flags;
  for (const Dtype d : {Dtype::kBf16, Dtype::kFp16}) {
    if (gpu.peak(d) <= 0) continue;
    flags += (flags.empty() ? "--" : " or --") + std::string(to_string(d));
  }
  return flags;
}

}  // namespace

void check_precision(const GpuSpec& gpu, const ParallelPlan& plan) {
  const std::string gpu_name = "GPU type " + gpu.key + " (" + gpu.display_name + ")";
  if (plan.dtype == Dtype::kFp8)
    throw PlanError("training dtype fp8 is not supported; expected bf16 (--bf16), fp16 (--fp16) or "
                    "fp32 (--fp32), with FP8 linear layers through --fp8-format");
  if (plan.fp8 != Fp8Format::kNone && plan.dtype != Dtype::kBf16)
    throw PlanError(std::string("--fp8-format ") + to_string(plan.fp8) +
                    " runs FP8 linear layers on a bf16 base; drop --" +
                    (plan.dtype == Dtype::kTf32 ? "fp32" : to_string(plan.dtype)));
  // fp32 runs on every GPU: its matmuls fall back from TF32 to the fp32 pipes where there are
  // no TF32 tensor cores (GpuSpec::matmul_dtype).
  if (plan.dtype == Dtype::kFp32 || plan.dtype == Dtype::kTf32) return;
  if (gpu.peak(plan.dtype) <= 0) {
    const std::string flags = supported_flags(gpu);
    throw PlanError(gpu_name + " has no " + to_string(plan.dtype) + " tensor cores; " +
                    (flags.empty() ? std::string("it cannot train in bf16 or fp16")
                                   : "train it with " + flags));
  }
  if (plan.fp8 != Fp8Format::kNone && gpu.peak(Dtype::kFp8) <= 0)
    throw PlanError(gpu_name + " has no fp8 tensor cores; drop --fp8-format " +
                    to_string(plan.fp8) + " to train it in " + to_string(plan.dtype));
}

BytesPerParam bytes_per_param(const ParallelPlan& plan) {
  if (plan.dtype == Dtype::kFp32 || plan.dtype == Dtype::kTf32) return {4.0, 4.0, 8.0};
  if (plan.grads_in_fp32()) return BytesPerParam{};  // its defaults are the fp32-main-grad layout
  return {2.0, 2.0, 16.0};
}

}  // namespace hetsim

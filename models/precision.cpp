#include "models/precision.hpp"

#include "base/error.hpp"

namespace hetsim {

std::string precision_name(const ParallelPlan& plan) {
  if (plan.fp8 != Fp8Format::kNone) return std::string("fp8-") + to_string(plan.fp8);
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
  if (plan.dtype != Dtype::kBf16 && plan.dtype != Dtype::kFp16)
    throw PlanError(std::string("training dtype ") + to_string(plan.dtype) +
                    " is not supported; expected bf16 (--bf16) or fp16 (--fp16)");
  if (plan.fp8 != Fp8Format::kNone && plan.dtype != Dtype::kBf16)
    throw PlanError(std::string("--fp8-format ") + to_string(plan.fp8) +
                    " runs FP8 linear layers on a bf16 base; drop --" + to_string(plan.dtype));
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
  if (plan.grads_in_fp32()) return BytesPerParam{};  // its defaults are the fp32-main-grad layout
  return {2.0, 2.0, 16.0};
}

}  // namespace hetsim

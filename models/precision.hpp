#pragma once
// A training run's precision: the name the report prints, the GEMM dtype of the linear layers,
// the check that every GPU of the run has tensor cores for it, and the bytes each parameter
// costs (weights, gradients, optimizer state) in Megatron's mixed-precision layout.
#include <string>

#include "models/gpu_catalog.hpp"
#include "models/parallel_plan.hpp"

namespace hetsim {

// "bf16", "fp16", "fp32", "fp32-tf32" (fp32 training with TF32 matmuls), "fp8-e4m3" or
// "fp8-hybrid".
std::string precision_name(const ParallelPlan& plan);

// The dtype the linear layers' GEMMs run in: fp8 under --fp8-format, else the plan's dtype.
Dtype linear_gemm_dtype(const ParallelPlan& plan);

// Throws PlanError when `gpu` has no tensor-core peak (catalog 0) for the plan's dtype or, with
// --fp8-format, for fp8: the message names the GPU type, the dtype and the flag to use instead.
// Nothing falls back to the fp32 peak.
void check_precision(const GpuSpec& gpu, const ParallelPlan& plan);

// Bytes per parameter of each static tensor.
struct BytesPerParam {
  double weights = 2.0;
  double gradients = 4.0;
  double optimizer = 12.0;
};

// Megatron-LM's mixed precision (docs/source/api-guide/dist_optimizer.md, "theoretical number of
// bytes per parameter": fp16 parameters and gradients 20 = 4 + 16; bf16 parameters with fp32
// gradients 18 = 6 + 12): 2-byte weights always; with fp32 main grads (bf16, or fp16 with
// --accumulate-allreduce-grads-in-fp32) a 4-byte gradient buffer and 12 bytes of optimizer
// state (fp32 master weights, Adam m and v); with fp16 gradients a 2-byte gradient buffer and 16
// bytes of optimizer state, which then also keeps fp32 copies of the gradients. The gradient
// buffer is what data parallelism reduces, so `gradients` is also the reduced bytes per param.
BytesPerParam bytes_per_param(const ParallelPlan& plan);

}  // namespace hetsim

#pragma once
// The roofline: how long one kernel takes on one GPU, from its FLOPs and HBM bytes and the GPU's
// fitted efficiency curves (EfficiencyCurve in gpu_catalog.hpp).
#include "models/gpu_catalog.hpp"

namespace hetsim {

// Kernel classes with their own efficiency curves.
enum class KernelKind {
  kGemm,         // dense or batched matmul: compute-bound unless the operands dominate
  kElementwise,  // adds, activations, dropout, softmax, embedding gather: memory-bound
  kNorm,         // LayerNorm / RMSNorm: memory-bound row reductions
};

// Work of one kernel on one GPU.
struct KernelWork {
  double flops = 0;  // matmul FLOPs (2 per multiply-add); 0 for memory-bound kernels
  double bytes = 0;  // HBM bytes read + written
};

// time = max(flops / (peak(dtype) * e_c) + o_c, bytes / (HBM * e_m) + o_m) for GEMMs, with the
// gemm_compute and gemm_memory curves; bytes / (HBM * e) + o for the memory-bound classes.
// A dtype the GPU lacks (peak 0) falls back to fp32 peak, as frameworks do. Zero work costs 0 s.
double kernel_time(KernelKind kind, const KernelWork& work, const GpuSpec& gpu, Dtype dtype);

// The peak rate a kernel of `dtype` runs at on `gpu` (fp32 when the dtype is unsupported).
double effective_peak(const GpuSpec& gpu, Dtype dtype);

}  // namespace hetsim

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
// Zero work costs 0 s. A GEMM in a dtype the GPU lacks (catalog peak 0) throws Error: there is
// no silent fallback to another dtype's peak (runs check their precision first, see
// models/precision.hpp).
double kernel_time(KernelKind kind, const KernelWork& work, const GpuSpec& gpu, Dtype dtype);

}  // namespace hetsim

#pragma once
// The roofline: how long one kernel takes on one GPU, from its FLOPs and HBM bytes and the GPU's
// fitted efficiency curves (EfficiencyCurve in gpu_catalog.hpp).
#include "models/gpu_catalog.hpp"

namespace hetsim {

// Kernel classes with their own efficiency curves.
enum class KernelKind {
  kGemm,         // dense or batched matmul: compute-bound unless the operands dominate
  kElementwise,  // adds, activations, hidden-state dropout, embedding gather: memory-bound
  kNorm,         // LayerNorm / RMSNorm: memory-bound row reductions
  kScoreElementwise,  // the unfused attention's softmax and dropout over the s x s scores
};

// Work of one kernel on one GPU.
struct KernelWork {
  double flops = 0;  // matmul FLOPs (2 per multiply-add); 0 for memory-bound kernels
  double bytes = 0;  // HBM bytes read + written
};

// GEMMs: compute time t_c = flops / (peak(dtype) * e_c) + o_c and memory time
// t_m = bytes / (HBM * e_m) + o_m from the gemm_compute and gemm_memory curves, combined as
// (t_c^p + t_m^p)^(1/p) with the GPU's gemm_ridge_exponent p: the slower of the two far from the
// ridge, 2^(1/p) times either where they are equal (measured GEMMs there run 1.3x the slower,
// models/README.md). Memory-bound classes: bytes / (HBM * e) + o, each with its own curve.
// Zero work costs 0 s. A GEMM in a dtype the GPU lacks (catalog peak 0) throws Error: there is
// no silent fallback to another dtype's peak (runs check their precision first, see
// models/precision.hpp).
double kernel_time(KernelKind kind, const KernelWork& work, const GpuSpec& gpu, Dtype dtype);

// One curve's time for `work` (FLOPs or bytes) against a peak `rate`:
// work / (rate * max_efficiency) + overhead_s.
double curve_seconds(const EfficiencyCurve& curve, double work, double rate);

// A GEMM's time from its compute and memory times and the ridge exponent p >= 1:
// (compute^p + memory^p)^(1/p).
double roofline_gemm_time(double compute_s, double memory_s, double p);

}  // namespace hetsim

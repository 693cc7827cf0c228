#include "models/roofline.hpp"

#include <algorithm>
#include <cmath>

#include "base/error.hpp"

namespace hetsim {

double curve_seconds(const EfficiencyCurve& curve, double work, double rate) {
  return work / (rate * curve.max_efficiency) + curve.overhead_s;
}

namespace {
double gemm_peak(const GpuSpec& gpu, Dtype dtype) {
  const double peak = gpu.peak(gpu.matmul_dtype(dtype));
  if (!(peak > 0))
    throw Error("GPU type " + gpu.key + " has no " + to_string(dtype) + " peak in the GPU catalog");
  return peak;
}
}  // namespace

double roofline_gemm_time(double compute_s, double memory_s, double p) {
  // Written as the slower time scaled, so that a large p cannot overflow.
  const double slower = std::max(compute_s, memory_s), faster = std::min(compute_s, memory_s);
  if (!(slower > 0)) return 0.0;
  return slower * std::pow(1.0 + std::pow(faster / slower, p), 1.0 / p);
}

double kernel_time(KernelKind kind, const KernelWork& work, const GpuSpec& gpu, Dtype dtype) {
  if (work.flops <= 0 && work.bytes <= 0) return 0.0;
  const RooflineEfficiency& e = gpu.efficiency;
  const double hbm = gpu.hbm_bytes_per_s;
  switch (kind) {
    case KernelKind::kGemm:
      return roofline_gemm_time(curve_seconds(e.gemm_compute, work.flops, gemm_peak(gpu, dtype)),
                                curve_seconds(e.gemm_memory, work.bytes, hbm), e.gemm_ridge_exponent);
    case KernelKind::kElementwise:
      return curve_seconds(e.elementwise, work.bytes, hbm);
    case KernelKind::kNorm:
      return curve_seconds(e.norm, work.bytes, hbm);
    case KernelKind::kScoreElementwise:
      return curve_seconds(e.score_elementwise, work.bytes, hbm);
  }
  return 0.0;
}

}  // namespace hetsim

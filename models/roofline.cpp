#include "models/roofline.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace hetsim {

namespace {
double curve_time(const EfficiencyCurve& curve, double work, double rate) {
  return work / (rate * curve.max_efficiency) + curve.overhead_s;
}

double gemm_peak(const GpuSpec& gpu, Dtype dtype) {
  const double peak = gpu.peak(dtype);
  if (!(peak > 0))
    throw Error("GPU type " + gpu.key + " has no " + to_string(dtype) + " peak in the GPU catalog");
  return peak;
}
}  // namespace

double kernel_time(KernelKind kind, const KernelWork& work, const GpuSpec& gpu, Dtype dtype) {
  if (work.flops <= 0 && work.bytes <= 0) return 0.0;
  const RooflineEfficiency& e = gpu.efficiency;
  const double hbm = gpu.hbm_bytes_per_s;
  switch (kind) {
    case KernelKind::kGemm:
      return std::max(curve_time(e.gemm_compute, work.flops, gemm_peak(gpu, dtype)),
                      curve_time(e.gemm_memory, work.bytes, hbm));
    case KernelKind::kElementwise:
      return curve_time(e.elementwise, work.bytes, hbm);
    case KernelKind::kNorm:
      return curve_time(e.norm, work.bytes, hbm);
  }
  return 0.0;
}

}  // namespace hetsim

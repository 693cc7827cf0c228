// Extra work of FP8 linear layers (Transformer Engine's delayed scaling); see fp8_cost.hpp.
#include "models/fp8_cost.hpp"

#include <string>

namespace hetsim {

namespace {
// Bytes per element: the bf16 source read, the FP8 copy and its transpose written.
constexpr double kCastReadBytes = 2.0;
constexpr double kCastWriteBytes = 2.0 * 1.0;
constexpr double kFp32 = 4.0;
}  // namespace

Fp8Linears fp8_linears(const ParallelPlan& plan) {
  return {plan.fp8, plan.global_batch_size > 0 && plan.dp > 0 ? plan.microbatches() : 1};
}

bool runs_in_fp8(const LayerOp& op) {
  return op.op_class == OpClass::kGemm && op.name != "moe_router" && op.name != "shared_expert_gate";
}

double linear_weight_elements(const LayerOp& op, double element_bytes) {
  const GemmShape& s = op.gemm;
  return op.forward.bytes / element_bytes - s.m * s.k - s.m * s.n;
}

Fp8Casts fp8_casts(const LayerOp& op, double element_bytes, int microbatches) {
  Fp8Casts c;
  if (!runs_in_fp8(op)) return c;
  const GemmShape& s = op.gemm;
  const double per_element = kCastReadBytes + kCastWriteBytes;
  const double weight_share = 1.0 / (microbatches > 0 ? microbatches : 1);
  c.forward_bytes = per_element * (s.m * s.k + weight_share * linear_weight_elements(op, element_bytes));
  c.forward_kernels = 1 + weight_share;
  c.backward_bytes = per_element * s.m * s.n;
  c.backward_kernels = 1;
  return c;
}

double fp8_cast_seconds(double bytes, double kernels, const GpuSpec& gpu) {
  const EfficiencyCurve& e = gpu.efficiency.elementwise;
  return bytes / (gpu.hbm_bytes_per_s * e.max_efficiency) + kernels * e.overhead_s;
}

double fp8_scale_update_seconds(const std::vector<LayerOp>& ops, double layers, bool backward,
                                const GpuSpec& gpu) {
  double linears = 0;
  for (const LayerOp& op : ops) linears += runs_in_fp8(op) ? 1 : 0;
  if (linears == 0 || layers <= 0) return 0.0;
  const double tensors = layers * linears * (backward ? 2 : 3);
  // Per tensor: read and write its one-entry amax history and its scale and write the inverse
  // scale, all fp32.
  const double bytes = tensors * kFp32 * 5;
  return fp8_cast_seconds(bytes, 1, gpu);
}

}  // namespace hetsim

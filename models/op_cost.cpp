// Op times from a measured profile where it has them, from the roofline where it does not.
#include "models/op_cost.hpp"

#include <optional>

namespace hetsim {

void SourceCounts::add(CostSource source, long times) {
  if (source == CostSource::kProfile) profile += times;
  if (source == CostSource::kRoofline) roofline += times;
}

SourceCounts& CostSources::of(OpClass op_class) {
  switch (op_class) {
    case OpClass::kGemm:
      return gemm;
    case OpClass::kAttention:
      return attention;
    case OpClass::kMemoryBound:
      return memory_bound;
  }
  return memory_bound;
}

namespace {

PassCost roofline(KernelKind kind, const KernelWork& work, const GpuSpec& gpu, Dtype dtype) {
  return {kernel_time(kind, work, gpu, dtype), CostSource::kRoofline};
}

bool has_work(const KernelWork& w) { return w.flops > 0 || w.bytes > 0; }

// One GEMM of shape C[m,n] = A[m,k] B[k,n] with `work` for the roofline fallback.
PassCost gemm_cost(const GemmShape& s, const KernelWork& work, const GpuSpec& gpu, Dtype dtype,
                   const calibration::Profile* profile) {
  if (!has_work(work)) return {};
  if (profile) {
    if (const auto t = profile->gemm_seconds(s.m, s.n, s.k, dtype))
      return {*t, CostSource::kProfile};
  }
  return roofline(KernelKind::kGemm, work, gpu, dtype);
}

std::optional<double> attention_lookup(const AttentionShape& a, bool backward, Dtype dtype,
                                       const calibration::Profile* profile) {
  if (!profile) return std::nullopt;
  // Decoder-only models: causal masking, as the profile's causal points were measured.
  const auto whole = profile->attention_seconds(backward, a.batch, a.heads, a.seq, a.head_dim, true, dtype);
  if (!whole) return std::nullopt;
  return *whole * a.share;
}

}  // namespace

PassCost memory_bound_cost(const std::vector<std::string>& profile_kinds, KernelKind kind,
                           double bytes, const GpuSpec& gpu, Dtype dtype,
                           const calibration::Profile* profile) {
  if (!(bytes > 0)) return {};
  if (profile) {
    for (const std::string& k : profile_kinds) {
      if (const auto t = profile->memory_bound_seconds(k, bytes)) return {*t, CostSource::kProfile};
    }
  }
  return roofline(kind, {0.0, bytes}, gpu, dtype);
}

std::vector<OpCost> cost_ops(const std::vector<LayerOp>& ops, const GpuSpec& gpu, Dtype dtype,
                             const calibration::Profile* profile, const Fp8Linears& fp8) {
  // The attention core's measured forward and backward, looked up once (all its parts share
  // one shape) and charged to its first part.
  std::optional<double> core_forward, core_backward;
  bool core_charged = false;
  for (const LayerOp& op : ops) {
    if (op.op_class == OpClass::kAttention) {
      core_forward = attention_lookup(op.attention, false, dtype, profile);
      core_backward = attention_lookup(op.attention, true, dtype, profile);
      break;
    }
  }

  std::vector<OpCost> costs;
  costs.reserve(ops.size());
  for (const LayerOp& op : ops) {
    OpCost c;
    switch (op.op_class) {
      case OpClass::kGemm: {
        const GemmShape& s = op.gemm;
        const bool in_fp8 = fp8.on() && runs_in_fp8(op);
        const Dtype gemm_dtype = in_fp8 ? Dtype::kFp8 : dtype;
        c.forward = gemm_cost(s, op.forward, gpu, gemm_dtype, profile);
        c.backward_input = gemm_cost({s.m, s.k, s.n}, op.backward_input, gpu, gemm_dtype, profile);
        c.backward_weight = gemm_cost({s.k, s.n, s.m}, op.backward_weight, gpu, gemm_dtype, profile);
        if (in_fp8) {
          const Fp8Casts casts = fp8_casts(op, gemm_element_bytes(dtype), fp8.microbatches);
          c.forward.seconds += fp8_cast_seconds(casts.forward_bytes, casts.forward_kernels, gpu);
          c.backward_input.seconds +=
              fp8_cast_seconds(casts.backward_bytes, casts.backward_kernels, gpu);
        }
        break;
      }
      case OpClass::kAttention: {
        const auto part = [&](const std::optional<double>& measured,
                              const KernelWork& work) -> PassCost {
          if (!has_work(work)) return {};
          if (!measured) return roofline(op.kind, work, gpu, dtype);
          return {core_charged ? 0.0 : *measured, CostSource::kProfile};
        };
        c.forward = part(core_forward, op.forward);
        c.backward_input = part(core_backward, op.backward_input);
        c.backward_weight = part(std::nullopt, op.backward_weight);  // no weights: no work
        core_charged = true;
        break;
      }
      case OpClass::kMemoryBound:
        c.forward =
            memory_bound_cost(op.profile_kinds, op.kind, op.forward.bytes, gpu, dtype, profile);
        c.backward_input = memory_bound_cost(op.profile_kinds, op.kind, op.backward_input.bytes,
                                             gpu, dtype, profile);
        c.backward_weight = memory_bound_cost(op.profile_kinds, op.kind, op.backward_weight.bytes,
                                              gpu, dtype, profile);
        break;
    }
    costs.push_back(c);
  }
  return costs;
}

void count_sources(const std::vector<LayerOp>& ops, const std::vector<OpCost>& costs, long times,
                   CostSources& sources) {
  for (std::size_t i = 0; i < ops.size() && i < costs.size(); ++i) {
    SourceCounts& counts = sources.of(ops[i].op_class);
    counts.add(costs[i].forward.source, times);
    counts.add(costs[i].backward_input.source, times);
    counts.add(costs[i].backward_weight.source, times);
  }
}

}  // namespace hetsim

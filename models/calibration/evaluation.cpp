#include "models/calibration/evaluation.hpp"

#include <algorithm>
#include <cmath>

namespace hetsim::calibration {

std::optional<double> predict(const Profile& profile, const Measurement& m) {
  switch (m.kind) {
    case OpKind::kGemm: return profile.gemm_seconds(m.m, m.n, m.k, m.dtype);
    case OpKind::kAttention: {
      for (const Dtype d : {Dtype::kFp32, Dtype::kTf32, Dtype::kBf16, Dtype::kFp16, Dtype::kFp8}) {
        if (m.dtype == dtype_key(d)) {
          return profile.attention_seconds(m.op == "bwd", m.batch, m.heads, m.seq, m.head_dim, m.causal, d);
        }
      }
      return std::nullopt;
    }
    case OpKind::kMemoryBound: return profile.memory_bound_seconds(m.op, m.bytes);
    case OpKind::kCopy: return profile.copy_seconds(m.op, m.bytes);
    case OpKind::kCollective: return profile.collective_seconds(m.op, m.bytes, m.ranks);
    case OpKind::kLaunch: return profile.launch_overhead_seconds();
  }
  return std::nullopt;
}

double element_bytes(const std::string& dtype) {
  if (dtype == "fp8") return 1;
  if (dtype == "tf32" || dtype == "fp32") return 4;
  return 2;
}

std::optional<double> roofline_seconds(const Roofline& r, const Measurement& m) {
  const auto peak_it = r.peak_flops.find(m.dtype);
  const double peak = peak_it == r.peak_flops.end() ? 0 : peak_it->second;
  switch (m.kind) {
    case OpKind::kGemm: {
      if (peak <= 0 || r.memory_bytes_per_s <= 0) return std::nullopt;
      const double flops = 2.0 * m.m * m.n * m.k;
      const double bytes = (m.m * m.k + m.k * m.n + m.m * m.n) * element_bytes(m.dtype);
      return std::max(flops / peak, bytes / r.memory_bytes_per_s);
    }
    case OpKind::kAttention:
      if (peak <= 0) return std::nullopt;
      return attention_flops(m.op == "bwd", m.batch, m.heads, m.seq, m.head_dim, m.causal) / peak;
    case OpKind::kMemoryBound:
      if (r.memory_bytes_per_s <= 0) return std::nullopt;
      return m.bytes / r.memory_bytes_per_s;
    default: return std::nullopt;
  }
}

std::map<std::string, ErrorStats> summarize_errors(
    const std::vector<std::pair<const Measurement*, double>>& predicted) {
  std::map<std::string, std::vector<std::pair<double, const Measurement*>>> errors;
  for (const auto& [m, p] : predicted) {
    const double e = std::abs(p - m->seconds) / m->seconds;
    errors[m->label].emplace_back(e, m);
    errors[""].emplace_back(e, m);
  }
  std::map<std::string, ErrorStats> out;
  for (auto& [label, list] : errors) {
    ErrorStats s;
    s.count = list.size();
    std::vector<double> values;
    for (const auto& [e, m] : list) {
      values.push_back(e);
      if (e >= s.max_abs_error) {
        s.max_abs_error = e;
        s.worst_source = m->source;
      }
    }
    s.median_abs_error = median(values);
    std::sort(values.begin(), values.end());
    s.p95_abs_error = values[static_cast<std::size_t>(std::ceil(0.95 * values.size())) - 1];
    s.over_15_percent = static_cast<std::size_t>(
        values.end() - std::upper_bound(values.begin(), values.end(), 0.15));
    out[label] = s;
  }
  return out;
}

}  // namespace hetsim::calibration

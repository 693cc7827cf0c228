#include "models/calibration/profile.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetsim::calibration {

const char* dtype_key(Dtype d) {
  switch (d) {
    case Dtype::kFp32: return "fp32";
    case Dtype::kTf32: return "tf32";
    case Dtype::kBf16: return "bf16";
    case Dtype::kFp16: return "fp16";
    case Dtype::kFp8: return "fp8";
  }
  return "?";
}

std::optional<double> bus_factor(std::string_view op, int ranks) {
  const double n = ranks;
  if (op == "all_reduce") return 2.0 * (n - 1) / n;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all") return (n - 1) / n;
  if (op == "send_recv" || op == "broadcast" || op == "reduce") return 1.0;
  return std::nullopt;
}

double attention_flops(bool backward, double batch, double heads, double seq, double head_dim, bool causal) {
  const double gemm = 2.0 * batch * heads * seq * seq * head_dim;
  const double forward = 2.0 * gemm * (causal ? 0.5 : 1.0);
  return backward ? 2.5 * forward : forward;
}

Profile::Profile(ProfileData data) : data_(std::move(data)) {
  for (const auto& [dtype, points] : data_.gemm) {
    std::map<std::pair<double, double>, std::vector<std::pair<double, double>>> by_nk;
    for (const auto& p : points) by_nk[{p.n, p.k}].emplace_back(p.m, p.seconds);
    auto& curves = gemm_curves_[dtype];
    for (auto& [nk, ms] : by_nk) curves.push_back({nk.first, nk.second, WorkTimeCurve(std::move(ms))});
  }
  for (const auto& [kind, points] : data_.memory_bound) {
    if (!points.empty()) memory_curves_.emplace(kind, WorkTimeCurve(points));
  }
}

std::optional<double> Profile::gemm_seconds(double m, double n, double k, Dtype dtype) const {
  return gemm_seconds(m, n, k, dtype_key(dtype));
}

std::optional<double> Profile::gemm_seconds(double m, double n, double k, std::string_view dtype) const {
  const auto it = gemm_curves_.find(std::string(dtype));
  if (it == gemm_curves_.end() || it->second.empty() || !(m > 0 && n > 0 && k > 0)) return std::nullopt;
  const double flops = 2.0 * m * n * k;
  // Distance in (log n, log k); an exact match is used as measured.
  struct Near {
    double distance;
    double log_flops_per_s;
  };
  std::vector<Near> near;
  near.reserve(it->second.size());
  for (const auto& c : it->second) {
    const double t = c.by_m.seconds(m);
    const double d = std::hypot(std::log(n / c.n), std::log(k / c.k));
    if (d < 1e-12) return t * (n * k) / (c.n * c.k);
    near.push_back({d, std::log(2.0 * m * c.n * c.k / t)});
  }
  // Inverse-distance weights (power 2) over the four nearest shapes: near shapes dominate, and a
  // shape between two measured ones lands between their throughputs.
  constexpr std::size_t kNeighbours = 4;
  const std::size_t count = std::min(kNeighbours, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end(),
                    [](const Near& a, const Near& b) { return a.distance < b.distance; });
  double weight_sum = 0, weighted = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double w = 1.0 / (near[i].distance * near[i].distance);
    weight_sum += w;
    weighted += w * near[i].log_flops_per_s;
  }
  return flops / std::exp(weighted / weight_sum);
}

std::optional<double> Profile::attention_seconds(bool backward, double batch, double heads, double seq,
                                                 double head_dim, bool causal, Dtype dtype) const {
  const auto it = data_.attention.find(dtype_key(dtype));
  if (it == data_.attention.end()) return std::nullopt;
  // Nearest measured head_dim (in log space) among points of the same pass and masking.
  double best_dim = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& p : it->second) {
    if (p.backward != backward || p.causal != causal) continue;
    const double d = std::abs(std::log(p.head_dim / head_dim));
    if (d < best_distance) {
      best_distance = d;
      best_dim = p.head_dim;
    }
  }
  if (best_dim == 0) return std::nullopt;
  // Achieved FLOP/s against sequence length; the curve is built over "work" = seq with time
  // 1/throughput scaled so that WorkTimeCurve's clamping keeps throughput constant outside.
  std::vector<std::pair<double, double>> seq_seconds_per_flop;
  for (const auto& p : it->second) {
    if (p.backward != backward || p.causal != causal || p.head_dim != best_dim) continue;
    const double f = attention_flops(backward, p.batch, p.heads, p.seq, p.head_dim, causal);
    seq_seconds_per_flop.emplace_back(p.seq, p.seconds / f);
  }
  const WorkTimeCurve curve(std::move(seq_seconds_per_flop));
  // Interpolate seconds-per-FLOP in log seq, constant outside the measured range.
  const double s = std::clamp(seq, curve.min_work(), curve.max_work());
  return curve.seconds(s) * attention_flops(backward, batch, heads, seq, head_dim, causal);
}

std::optional<double> Profile::memory_bound_seconds(std::string_view kind, double bytes) const {
  const auto it = memory_curves_.find(std::string(kind));
  if (it == memory_curves_.end() || !(bytes > 0)) return std::nullopt;
  return it->second.seconds(bytes);
}

std::optional<double> Profile::copy_seconds(std::string_view kind, double bytes) const {
  const auto it = data_.copies.find(std::string(kind));
  if (it == data_.copies.end() || !(bytes > 0)) return std::nullopt;
  const TransferFit& f = it->second;
  if (f.bytes_seconds.size() >= 2 && bytes >= f.bytes_seconds.front().first &&
      bytes <= f.bytes_seconds.back().first) {
    return WorkTimeCurve(f.bytes_seconds).seconds(bytes);
  }
  return f.fit.seconds(bytes);
}

std::optional<double> Profile::collective_seconds(std::string_view op, double bytes, int ranks) const {
  const auto it = data_.collectives.find(std::string(op));
  const auto factor = bus_factor(op, ranks);
  if (it == data_.collectives.end() || it->second.empty() || !factor || ranks < 2 || !(bytes > 0)) {
    return std::nullopt;
  }
  const auto& fits = it->second;  // sorted by ranks
  for (const auto& f : fits) {
    if (f.ranks != ranks) continue;
    if (f.bytes_seconds.size() >= 2 && bytes >= f.bytes_seconds.front().first &&
        bytes <= f.bytes_seconds.back().first) {
      return WorkTimeCurve(f.bytes_seconds).seconds(bytes);
    }
    return f.fit.alpha_s + bytes * *factor / f.fit.rate;
  }
  // Unmeasured rank count: alpha and bus bandwidth interpolated in log(ranks) between the
  // neighbouring measured counts, the nearest one outside their range.
  const TransferFit* below = nullptr;
  const TransferFit* above = nullptr;
  for (const auto& f : fits) {
    if (f.ranks < ranks) below = &f;
    if (f.ranks > ranks && above == nullptr) above = &f;
  }
  double alpha = 0, rate = 0;
  if (below && above) {
    const double w = std::log(static_cast<double>(ranks) / below->ranks) /
                     std::log(static_cast<double>(above->ranks) / below->ranks);
    alpha = below->fit.alpha_s + w * (above->fit.alpha_s - below->fit.alpha_s);
    rate = std::exp(std::log(below->fit.rate) + w * std::log(above->fit.rate / below->fit.rate));
  } else {
    const TransferFit* f = below ? below : above;
    alpha = f->fit.alpha_s;
    rate = f->fit.rate;
  }
  return alpha + bytes * *factor / rate;
}

}  // namespace hetsim::calibration

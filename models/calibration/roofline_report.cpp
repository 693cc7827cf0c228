#include "models/calibration/roofline_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace hetsim::calibration {

Roofline roofline_from_profile(const Profile& profile) {
  Roofline r;
  r.peak_flops = profile.gpu().peak_flops;
  r.memory_bytes_per_s = profile.gpu().hbm_bytes_per_s;
  r.source = profile.gpu().peaks_source;
  return r;
}

namespace {

void row(std::string& out, const Roofline& r, const Measurement& m, const std::string& shape) {
  const auto roof = roofline_seconds(r, m);
  const std::string roof_text = roof ? fmt::format("{:12.2f}", *roof * 1e6) : fmt::format("{:>12}", "-");
  const std::string achieved = roof ? fmt::format("{:8.1f}%", 100.0 * *roof / m.seconds) : fmt::format("{:>9}", "-");
  out += fmt::format("{:<13} {:<10} {:<6} {:<34} {:12.2f} {} {}\n", to_string(m.kind), m.op, m.dtype, shape,
                     m.seconds * 1e6, roof_text, achieved);
}

// " (132 SMs, 1980 MHz SM clock, driver 13.0, CUDA 13.0)" with only the fields the profile knows:
// a profile refitted from another profiler's CSV records none of them.
std::string machine_details(const GpuInfo& g) {
  std::vector<std::string> known;
  if (g.sm_count > 0) known.push_back(fmt::format("{} SMs", g.sm_count));
  if (g.sm_clock_mhz > 0) known.push_back(fmt::format("{} MHz SM clock", g.sm_clock_mhz));
  if (!g.driver_version.empty()) known.push_back("driver " + g.driver_version);
  if (!g.cuda_version.empty()) known.push_back("CUDA " + g.cuda_version);
  return known.empty() ? "" : fmt::format(" ({})", fmt::join(known, ", "));
}

}  // namespace

std::string roofline_report(const Profile& profile, const Roofline& r) {
  const ProfileData& d = profile.data();
  std::string out = fmt::format("profile: {}{}\n", d.gpu.name, machine_details(d.gpu));
  out += fmt::format("roofline: HBM {:.0f} GB/s", r.memory_bytes_per_s / 1e9);
  for (const auto& [dtype, flops] : r.peak_flops) out += fmt::format(", {} {:.1f} TFLOP/s", dtype, flops / 1e12);
  out += r.source.empty() ? "\n" : fmt::format(" (source: {})\n", r.source);
  out += fmt::format("{:<13} {:<10} {:<6} {:<34} {:>12} {:>12} {:>9}\n", "class", "op", "dtype", "shape",
                     "measured_us", "roofline_us", "of_roof");
  for (const auto& [dtype, points] : d.gemm) {
    for (const auto& p : points) {
      Measurement m;
      m.kind = OpKind::kGemm;
      m.op = "gemm";
      m.dtype = dtype;
      m.m = p.m;
      m.n = p.n;
      m.k = p.k;
      m.seconds = p.seconds;
      row(out, r, m, fmt::format("m={} n={} k={}", p.m, p.n, p.k));
    }
  }
  for (const auto& [dtype, points] : d.attention) {
    for (const auto& p : points) {
      Measurement m;
      m.kind = OpKind::kAttention;
      m.op = p.backward ? "bwd" : "fwd";
      m.dtype = dtype;
      m.batch = p.batch;
      m.heads = p.heads;
      m.seq = p.seq;
      m.head_dim = p.head_dim;
      m.causal = p.causal;
      m.seconds = p.seconds;
      row(out, r, m, fmt::format("b={} h={} s={} d={}{}", p.batch, p.heads, p.seq, p.head_dim,
                                 p.causal ? " causal" : ""));
    }
  }
  for (const auto& [kind, points] : d.memory_bound) {
    for (const auto& [bytes, seconds] : points) {
      Measurement m;
      m.kind = OpKind::kMemoryBound;
      m.op = kind;
      m.bytes = bytes;
      m.seconds = seconds;
      row(out, r, m, fmt::format("bytes={}", bytes));
    }
  }
  for (const auto& [kind, f] : d.copies) {
    out += fmt::format("{:<13} {:<17} alpha {:.2f} us, {:.1f} GB/s (alpha-beta fit, {} sizes)\n", "copy", kind,
                       f.fit.alpha_s * 1e6, f.fit.rate / 1e9, f.bytes_seconds.size());
  }
  for (const auto& [op, fits] : d.collectives) {
    for (const auto& f : fits) {
      out += fmt::format("{:<13} {:<17} {} ranks: alpha {:.2f} us, bus bandwidth {:.1f} GB/s ({} sizes)\n",
                         "collective", op, f.ranks, f.fit.alpha_s * 1e6, f.fit.rate / 1e9, f.bytes_seconds.size());
    }
  }
  if (d.launch_overhead_s) out += fmt::format("launch        {:.2f} us\n", *d.launch_overhead_s * 1e6);
  if (!d.attention_method.empty()) out += fmt::format("attention measured as: {}\n", d.attention_method);
  return out;
}

}  // namespace hetsim::calibration

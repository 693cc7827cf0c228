#pragma once
// Holding a profile (or a plain roofline) against measurements: the predicted time of each
// measurement and the relative errors by label.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"
#include "models/calibration/profile.hpp"

namespace hetsim::calibration {

// The profile's prediction for a measurement's op and shape; empty where the profile lacks it.
std::optional<double> predict(const Profile& profile, const Measurement& m);

// A plain roofline: max(FLOPs / peak, bytes / bandwidth), from datasheet peaks.
struct Roofline {
  std::map<std::string, double> peak_flops;  // by dtype key
  double memory_bytes_per_s = 0;
  std::string source;
};
// GEMM: FLOPs 2mnk, bytes (mk + kn + mn) * element size; attention: attention_flops;
// memory-bound: the measurement's bytes. Empty for copies, collectives and launches, and where
// the roofline lacks the dtype's peak.
std::optional<double> roofline_seconds(const Roofline& roofline, const Measurement& m);
// Bytes per element of a dtype key (fp8 1, bf16/fp16 2, tf32/fp32 4); 2 when unknown.
double element_bytes(const std::string& dtype);

struct ErrorStats {
  std::size_t count = 0;
  double median_abs_error = 0;  // |predicted - measured| / measured
  double p95_abs_error = 0;     // 95th percentile (nearest rank)
  double max_abs_error = 0;
  std::size_t over_15_percent = 0;
  std::string worst_source;     // file:line of the worst prediction
};
// Errors by measurement label ("" key: all of them together). Measurements with no prediction
// are skipped.
template <typename Predictor>
std::map<std::string, ErrorStats> error_stats(const std::vector<Measurement>& ms, Predictor&& predictor);
std::map<std::string, ErrorStats> summarize_errors(
    const std::vector<std::pair<const Measurement*, double>>& predicted);

template <typename Predictor>
std::map<std::string, ErrorStats> error_stats(const std::vector<Measurement>& ms, Predictor&& predictor) {
  std::vector<std::pair<const Measurement*, double>> predicted;
  for (const auto& m : ms) {
    const std::optional<double> p = predictor(m);
    if (p) predicted.emplace_back(&m, *p);
  }
  return summarize_errors(predicted);
}

}  // namespace hetsim::calibration

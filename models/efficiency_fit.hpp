#pragma once
// Fitting a roofline efficiency curve (EfficiencyCurve) to measured kernel times: the model
// time = work / (rate * max_efficiency) + overhead_s is linear in work, so it is fitted by
// least squares on the relative error, sum(((slope * work + intercept) - measured) / measured)^2,
// which weighs a 10 us kernel as much as a 10 ms one.
#include <vector>

#include "models/gpu_catalog.hpp"

namespace hetsim {

struct LinearFit {
  double slope = 0;      // seconds per unit of work
  double intercept = 0;  // seconds
};

// Throws Error for fewer than two points, non-positive times or a degenerate (all-equal) work.
LinearFit fit_relative_least_squares(const std::vector<double>& work,
                                     const std::vector<double>& seconds);

// The ridge exponent p of GEMM times (c^p + m^p)^(1/p) (roofline_gemm_time) that best fits
// measured `seconds` of GEMMs whose compute and memory times by the curves are `compute_s` and
// `memory_s`, by least squares on the relative error; Brent's minimizer (Boost.Math) over p in
// [1, 16]. Throws Error for mismatched lengths, no points or non-positive times.
double fit_ridge_exponent(const std::vector<double>& compute_s, const std::vector<double>& memory_s,
                          const std::vector<double>& seconds);

// The curve of a fit against a peak `rate` (FLOP/s or bytes/s); a negative intercept (no floor
// in the data) becomes 0 overhead.
EfficiencyCurve curve_from_fit(const LinearFit& fit, double rate);

}  // namespace hetsim

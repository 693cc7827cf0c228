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

// The curve of a fit against a peak `rate` (FLOP/s or bytes/s); a negative intercept (no floor
// in the data) becomes 0 overhead.
EfficiencyCurve curve_from_fit(const LinearFit& fit, double rate);

}  // namespace hetsim

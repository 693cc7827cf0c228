#include "models/efficiency_fit.hpp"

#include <algorithm>
#include <cmath>

#include <boost/math/tools/minima.hpp>

#include "base/error.hpp"
#include "models/roofline.hpp"

namespace hetsim {

LinearFit fit_relative_least_squares(const std::vector<double>& work,
                                     const std::vector<double>& seconds) {
  if (work.size() != seconds.size() || work.size() < 2) {
    throw Error("efficiency fit needs at least two (work, seconds) pairs");
  }
  // Normal equations of the weighted problem with weights 1/t^2.
  double sxx = 0, sx = 0, s1 = 0, sxt = 0, st = 0;
  for (std::size_t i = 0; i < work.size(); ++i) {
    if (!(seconds[i] > 0)) throw Error("efficiency fit needs positive measured times");
    const double w = 1.0 / (seconds[i] * seconds[i]);
    sxx += w * work[i] * work[i];
    sx += w * work[i];
    s1 += w;
    sxt += w * work[i] * seconds[i];
    st += w * seconds[i];
  }
  const double det = sxx * s1 - sx * sx;
  if (!(std::abs(det) > 1e-300 * sxx * s1)) throw Error("efficiency fit: all work values equal");
  LinearFit fit;
  fit.slope = (sxt * s1 - sx * st) / det;
  fit.intercept = (sxx * st - sx * sxt) / det;
  if (!(fit.slope > 0)) throw Error("efficiency fit: time does not grow with work");
  return fit;
}

double fit_ridge_exponent(const std::vector<double>& compute_s, const std::vector<double>& memory_s,
                          const std::vector<double>& seconds) {
  if (compute_s.size() != seconds.size() || memory_s.size() != seconds.size() || seconds.empty()) {
    throw Error("ridge exponent fit needs (compute, memory, measured) triples");
  }
  for (double t : seconds) {
    if (!(t > 0)) throw Error("ridge exponent fit needs positive measured times");
  }
  const auto relative_sse = [&](double p) {
    double sum = 0;
    for (std::size_t i = 0; i < seconds.size(); ++i) {
      const double r = roofline_gemm_time(compute_s[i], memory_s[i], p) / seconds[i] - 1;
      sum += r * r;
    }
    return sum;
  };
  // Brent's minimizer to 20 bits (about 1e-6 of p).
  return boost::math::tools::brent_find_minima(relative_sse, 1.0, 16.0, 20).first;
}

EfficiencyCurve curve_from_fit(const LinearFit& fit, double rate) {
  EfficiencyCurve c;
  c.max_efficiency = std::min(1.0, 1.0 / (fit.slope * rate));
  c.overhead_s = std::max(0.0, fit.intercept);
  return c;
}

}  // namespace hetsim

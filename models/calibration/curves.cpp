#include "models/calibration/curves.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/error.hpp"

namespace hetsim::calibration {

double median(std::vector<double> values) {
  if (values.empty()) throw Error("median of an empty list");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

WorkTimeCurve::WorkTimeCurve(std::vector<std::pair<double, double>> work_seconds) {
  std::map<double, std::vector<double>> by_work;
  for (const auto& [w, t] : work_seconds) by_work[w].push_back(t);
  for (auto& [w, ts] : by_work) points_.emplace_back(w, median(std::move(ts)));
}

double WorkTimeCurve::seconds(double work) const {
  if (points_.empty()) throw Error("WorkTimeCurve::seconds on an empty curve");
  if (work <= points_.front().first) return points_.front().second;
  if (work >= points_.back().first) return points_.back().second * work / points_.back().first;
  const auto upper = std::lower_bound(points_.begin(), points_.end(), work,
                                      [](const auto& p, double w) { return p.first < w; });
  const auto lower = upper - 1;
  if (upper->first == work) return upper->second;
  const double f = std::log(work / lower->first) / std::log(upper->first / lower->first);
  return std::exp(std::log(lower->second) + f * std::log(upper->second / lower->second));
}

AlphaBeta fit_alpha_beta(const std::vector<std::pair<double, double>>& x_seconds) {
  // Minimise sum_i ((alpha + b x_i - t_i) / t_i)^2 over alpha and b = 1/rate: the 2x2 normal
  // equations with weights w_i = 1/t_i^2.
  double sw = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
  double x_min = INFINITY, x_max = 0;
  for (const auto& [x, t] : x_seconds) {
    const double w = 1.0 / (t * t);
    sw += w;
    sx += w * x;
    sxx += w * x * x;
    st += w * t;
    sxt += w * x * t;
    x_min = std::min(x_min, x);
    x_max = std::max(x_max, x);
  }
  if (x_seconds.size() < 2 || !(x_max > x_min) || !(x_min > 0)) {
    throw Error("an alpha-beta fit needs at least two distinct sizes > 0");
  }
  const double det = sw * sxx - sx * sx;
  double alpha = (st * sxx - sx * sxt) / det;
  double b = (sw * sxt - sx * st) / det;
  if (alpha < 0 || !(b > 0)) {
    // A negative latency is not physical: refit the slope alone through the origin.
    alpha = 0;
    b = sxt / sxx;
  }
  return AlphaBeta{alpha, 1.0 / b};
}

}  // namespace hetsim::calibration

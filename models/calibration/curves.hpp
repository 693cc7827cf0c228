#pragma once
// The small numerical pieces the fits are made of: a time-versus-work curve interpolated in
// log-log space, and a weighted least-squares alpha-beta line.
#include <utility>
#include <vector>

namespace hetsim::calibration {

// Time as a function of an amount of work (bytes, or GEMM rows), from measured (work, seconds)
// points. Between points: straight lines in log(work)-log(time). Below the smallest point the
// time stays at that point's (launch- or latency-bound: less work does not get faster); above the
// largest it grows in proportion to the work (the throughput reached there is kept).
class WorkTimeCurve {
 public:
  WorkTimeCurve() = default;
  // Points need not be sorted; repeated work values are combined by their median time.
  explicit WorkTimeCurve(std::vector<std::pair<double, double>> work_seconds);
  double seconds(double work) const;
  bool empty() const { return points_.empty(); }
  double min_work() const { return points_.front().first; }
  double max_work() const { return points_.back().first; }
  const std::vector<std::pair<double, double>>& points() const { return points_; }

 private:
  std::vector<std::pair<double, double>> points_;  // sorted by work, unique
};

// t = alpha + x / rate, fitted by least squares on relative error (weights 1/t^2), because times
// span orders of magnitude and a plain fit would ignore the small ones. alpha is kept >= 0.
struct AlphaBeta {
  double alpha_s = 0;
  double rate = 0;  // x units per second (bytes/s)
  double seconds(double x) const { return alpha_s + x / rate; }
};
// Needs at least two distinct x > 0; throws Error otherwise.
AlphaBeta fit_alpha_beta(const std::vector<std::pair<double, double>>& x_seconds);

// The median of a non-empty list (mean of the middle two for an even count).
double median(std::vector<double> values);

}  // namespace hetsim::calibration

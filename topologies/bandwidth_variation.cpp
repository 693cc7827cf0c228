#include "topologies/bandwidth_variation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numbers>
#include <sstream>

#include "base/error.hpp"
#include "base/units.hpp"

namespace hetsim {

double NormalDraws::next() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Uniform in (0, 1) from the top 53 bits; the half offset keeps log() away from 0.
  const auto uniform = [this] { return (static_cast<double>(bits_() >> 11) + 0.5) * 0x1.0p-53; };
  const double u1 = uniform();
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * std::numbers::pi * u2;
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

std::vector<BandwidthPoint> random_walk_trace(double start_bytes_per_s, const RandomWalkSpec& walk) {
  std::vector<BandwidthPoint> points;
  if (!(walk.step_s > 0)) throw Error("random walk: step_s must be > 0");
  NormalDraws normal(walk.seed);
  double bandwidth = std::clamp(start_bytes_per_s, walk.min_bytes_per_s, walk.max_bytes_per_s);
  points.push_back({0.0, bandwidth});
  const auto steps = static_cast<long long>(std::floor(walk.duration_s / walk.step_s));
  points.reserve(static_cast<std::size_t>(steps) + 1);
  for (long long k = 1; k <= steps; ++k) {
    bandwidth = std::clamp(bandwidth * std::exp(walk.sigma * normal.next()), walk.min_bytes_per_s,
                           walk.max_bytes_per_s);
    points.push_back({static_cast<double>(k) * walk.step_s, bandwidth});
  }
  return points;
}

std::vector<BandwidthPoint> load_bandwidth_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "an unreadable file", "a readable CSV file of time_s,bandwidth_Gbps rows");
  std::string line;
  std::getline(in, line);
  if (line.rfind("time_s,bandwidth_Gbps", 0) != 0)
    throw InputError(path, "line 1", fmt::format("\"{}\"", line), "the header time_s,bandwidth_Gbps");
  std::vector<BandwidthPoint> points;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line == "\r") continue;
    std::istringstream row(line);
    double time_s = 0;
    double gbps = 0;
    char comma = 0;
    const std::string where = fmt::format("line {}", number);
    if (!(row >> time_s >> comma >> gbps) || comma != ',')
      throw InputError(path, where, fmt::format("\"{}\"", line), "two numbers: time_s,bandwidth_Gbps");
    if (!(gbps > 0))
      throw InputError(path, where, fmt::format("bandwidth_Gbps {}", gbps), "a bandwidth > 0");
    if (time_s < 0 || (!points.empty() && time_s <= points.back().time_s))
      throw InputError(path, where, fmt::format("time_s {}", time_s),
                       points.empty() ? std::string("a time >= 0")
                                      : fmt::format("a time after the previous row's {}",
                                                    points.back().time_s));
    points.push_back({time_s, units::gbit_per_s_to_bytes(gbps)});
  }
  if (points.empty()) throw InputError(path, "", "no rows", "at least one time_s,bandwidth_Gbps row");
  return points;
}

}  // namespace hetsim

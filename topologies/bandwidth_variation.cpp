#include "topologies/bandwidth_variation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <sstream>
#include <string_view>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/units.hpp"
#include "topologies/link_ranges.hpp"

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

namespace {

// A cell of a trace row as a finite number: the whole cell (spaces around it allowed), so that
// "100xyz" or "1e999" is refused rather than read as its leading digits or infinity.
double number_cell(const std::string& path, const std::string& where, const char* column,
                   std::string_view cell, const char* unit) {
  const auto first = cell.find_first_not_of(' ');
  const auto last = cell.find_last_not_of(' ');
  const std::string_view digits = first == std::string_view::npos ? std::string_view()
                                                                  : cell.substr(first, last - first + 1);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(value))
    throw InputError(path, where, fmt::format("{} \"{}\"", column, cell),
                     fmt::format("a finite number ({})", unit));
  return value;
}

}  // namespace

std::vector<BandwidthPoint> load_bandwidth_trace(const std::string& path) {
  std::istringstream in(read_input_file(path, "CSV file of time_s,bandwidth_Gbps rows"));
  std::string line;
  std::getline(in, line);
  if (line.rfind("time_s,bandwidth_Gbps", 0) != 0)
    throw InputError(path, "line 1", fmt::format("\"{}\"", line), "the header time_s,bandwidth_Gbps");
  std::vector<BandwidthPoint> points;
  int number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = fmt::format("line {}", number);
    const std::size_t comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos)
      throw InputError(path, where, fmt::format("\"{}\"", line), "two numbers: time_s,bandwidth_Gbps");
    const std::string_view row(line);
    const double time_s = number_cell(path, where, "time_s", row.substr(0, comma), "seconds");
    const double gbps = number_cell(path, where, "bandwidth_Gbps", row.substr(comma + 1), "Gbit/s");
    // The range a cluster file allows for the same figure: 1e-300 Gbit/s used to give an
    // iteration of 7.7e301 s.
    if (!(gbps >= link_ranges::kMinGbps && gbps <= link_ranges::kMaxGbps))
      throw InputError(path, where, fmt::format("bandwidth_Gbps {}", gbps),
                       fmt::format("a bandwidth in [{:g}, {:g}] Gbit/s", link_ranges::kMinGbps,
                                   link_ranges::kMaxGbps));
    if (time_s < 0 || (!points.empty() && time_s <= points.back().time_s))
      throw InputError(path, where, fmt::format("time_s {}", time_s),
                       points.empty() ? std::string("a time >= 0")
                                      : fmt::format("a time after the previous row's {}",
                                                    points.back().time_s));
    if (points.size() == kMaxBandwidthPoints)
      throw InputError(path, where, "more rows", fmt::format("at most {} rows", kMaxBandwidthPoints));
    points.push_back({time_s, units::gbit_per_s_to_bytes(gbps)});
  }
  if (points.empty()) throw InputError(path, "", "no rows", "at least one time_s,bandwidth_Gbps row");
  return points;
}

}  // namespace hetsim

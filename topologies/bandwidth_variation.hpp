#pragma once
// Time-varying WAN bandwidth: a measured trace read from a CSV file, or a seeded random walk.
// Both give the piecewise-constant points a Link carries in bandwidth_trace; the same file and
// seed give the same points on every machine.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

// A geometric random walk: every step_s the bandwidth is multiplied by exp(sigma * z), z a
// standard normal draw, and clamped to [min, max]; points until duration_s.
struct RandomWalkSpec {
  std::uint64_t seed = 0;
  double step_s = 0;
  double sigma = 0;
  double min_bytes_per_s = 0;
  double max_bytes_per_s = 0;
  double duration_s = 0;
};

// Points one WAN link's time-varying bandwidth may hold (a trace's rows, a random walk's steps):
// a day at one point a tenth of a second, and 16 MB of points, so a typo cannot fill the memory.
inline constexpr std::size_t kMaxBandwidthPoints = 1'000'000;

std::vector<BandwidthPoint> random_walk_trace(double start_bytes_per_s, const RandomWalkSpec& walk);

// Reads "time_s,bandwidth_Gbps" rows (a header line first; times strictly increasing from 0 on,
// bandwidths > 0, each cell a whole finite number; at most kMaxBandwidthPoints rows). Throws
// InputError naming the file and the line.
std::vector<BandwidthPoint> load_bandwidth_trace(const std::string& path);

// Standard normal draws from std::mt19937_64 by the Box-Muller transform, written here because
// std::normal_distribution differs between standard libraries.
class NormalDraws {
 public:
  explicit NormalDraws(std::uint64_t seed) : bits_(seed) {}
  double next();

 private:
  std::mt19937_64 bits_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace hetsim

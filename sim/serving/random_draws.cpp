#include "sim/serving/random_draws.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace hetsim::serving {

double uniform_open01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

double exponential(std::mt19937_64& rng, double mean) { return -mean * std::log(uniform_open01(rng)); }

double standard_normal(std::mt19937_64& rng) {
  const double u1 = uniform_open01(rng);
  const double u2 = uniform_open01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double gamma_unit_scale(std::mt19937_64& rng, double shape) {
  if (shape < 1.0) {
    const double boosted = gamma_unit_scale(rng, shape + 1.0);
    return boosted * std::pow(uniform_open01(rng), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng);
    const double t = 1.0 + c * x;
    if (t <= 0) continue;
    const double v = t * t * t;
    const double u = uniform_open01(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

int uniform_int(std::mt19937_64& rng, int min, int max) {
  const double span = static_cast<double>(max) - min + 1.0;
  const int offset = static_cast<int>(std::floor(uniform_open01(rng) * span));
  return std::min(max, min + offset);
}

}  // namespace hetsim::serving

#include "models/calibration/measurement.hpp"

#include <array>
#include <limits>

namespace hetsim::calibration {

namespace {
constexpr std::array<std::pair<OpKind, const char*>, 6> kNames{{
    {OpKind::kGemm, "gemm"},
    {OpKind::kAttention, "attention"},
    {OpKind::kMemoryBound, "memory_bound"},
    {OpKind::kCopy, "copy"},
    {OpKind::kCollective, "collective"},
    {OpKind::kLaunch, "launch"},
}};
}  // namespace

const char* to_string(OpKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "?";
}

bool parse_op_kind(const std::string& text, OpKind& out) {
  for (const auto& [k, name] : kNames) {
    if (text == name) {
      out = k;
      return true;
    }
  }
  return false;
}

double Measurement::tag(const std::string& name) const {
  for (const auto& [key, value] : tags) {
    if (key == name) return value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace hetsim::calibration

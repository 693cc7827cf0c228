#include "base/report_json.hpp"

#include <cmath>
#include <optional>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim {

namespace {

// The first value that JSON cannot hold (non-finite number) or that reads as missing (null), as
// "POINTER is VALUE" with POINTER relative to `value`. The pointer is assembled on the way back
// up from a failure only: a 16k-GPU report has millions of values, and building every value's
// pointer beforehand cost more than the rest of the check. Reports are a few levels deep, so
// recursion is bounded by their shape.
std::optional<std::string> first_unwritable(const nlohmann::json& value) {
  if (value.is_null()) return std::string(" is null");
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    const double x = value.get<double>();
    return std::string(" is ") + (std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
  }
  if (value.is_object()) {
    for (const auto& [key, child] : value.items())
      if (auto found = first_unwritable(child)) return std::string("/").append(escape_pointer_token(key)).append(*found);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      if (auto found = first_unwritable(value[i])) return std::string("/").append(std::to_string(i)).append(*found);
  }
  return std::nullopt;
}

}  // namespace

void require_finite_report(const nlohmann::json& report) {
  if (const auto found = first_unwritable(report))
    throw SimulationError("report " + *found +
                          "; expected a finite figure (an input at the edge of its range, such as a "
                          "near-zero bandwidth or an extreme profile row, made it so)");
}

std::string dump_report(const nlohmann::json& report, int indent) {
  require_finite_report(report);
  return report.dump(indent);
}

}  // namespace hetsim

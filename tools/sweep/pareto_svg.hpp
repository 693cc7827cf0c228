#pragma once
// An SVG scatter plot of a sweep's feasible points, seconds against dollars per million tokens,
// with the Pareto front drawn over them; hovering a point shows its index and keys.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/sweep/sweep_summary.hpp"

namespace hetsim::sweep {

std::string pareto_svg(const SweepSummary& summary,
                       const std::vector<nlohmann::json>& lines_by_index, const std::string& title);

}  // namespace hetsim::sweep

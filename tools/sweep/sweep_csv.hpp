#pragma once
// A sweep as a CSV table for spreadsheets: one row per point in index order, the point's keys
// as columns, then the headline figures of its report, or its error.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hetsim::sweep {

std::string sweep_csv(const std::vector<nlohmann::json>& lines_by_index);

}  // namespace hetsim::sweep

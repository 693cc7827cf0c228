#pragma once
// The end of `sweep` and `merge`: the summary on standard output (a table, or JSON with
// --json) and, when asked for, the CSV table and the SVG plot of the Pareto front.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hetsim::sweep {

struct ReportRequest {
  std::string csv;    // path, or empty
  std::string svg;    // path, or empty
  std::string title;  // of the plot
  bool json = false;
};

// `lines_by_index`: the point lines at hand, sorted by index; `points`: how many the sweep has.
void report_sweep(const std::vector<nlohmann::json>& lines_by_index, std::size_t points,
                  const ReportRequest& request);

}  // namespace hetsim::sweep

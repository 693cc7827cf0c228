// Writing a sweep's summary, CSV and plot.
#include "tools/sweep/sweep_report.hpp"

#include <fmt/format.h>

#include "base/atomic_file.hpp"
#include "tools/sweep/pareto_svg.hpp"
#include "tools/sweep/sweep_csv.hpp"
#include "tools/sweep/sweep_summary.hpp"

namespace hetsim::sweep {

namespace {

void write_file(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.stream() << text;
  file.commit();
}

}  // namespace

void report_sweep(const std::vector<nlohmann::json>& lines_by_index, std::size_t points,
                  const ReportRequest& request) {
  const SweepSummary summary = summarize(lines_by_index, points);
  if (!request.csv.empty()) write_file(request.csv, sweep_csv(lines_by_index));
  if (!request.svg.empty())
    write_file(request.svg, pareto_svg(summary, lines_by_index, request.title));
  if (request.json)
    fmt::print("{}\n", summary_json(summary, lines_by_index).dump(2));
  else
    fmt::print("{}", summary_text(summary, lines_by_index));
}

}  // namespace hetsim::sweep

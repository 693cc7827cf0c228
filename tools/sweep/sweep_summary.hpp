#pragma once
// What a sweep found: the fastest point, the cheapest per token, and the Pareto front of
// training time against cost. Only feasible points compete: those that ran without error and
// fit in every GPU's memory. Ties go to the lower point index, so the summary is the same
// whatever order the points finished in.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace hetsim::sweep {

// One feasible point's two objectives, both per million tokens trained.
struct PointCosts {
  std::size_t index = 0;
  double seconds_per_million_tokens = 0;  // 1e6 / tokens_per_s
  double usd_per_million_tokens = 0;      // cost_usd.per_million_tokens
};

struct SweepSummary {
  std::size_t points = 0;                // in the spec (or shard)
  std::size_t finished = 0;              // lines at hand
  std::size_t invalid = 0;               // lines with an error
  std::size_t out_of_memory = 0;         // ran, but some GPU's need exceeds its memory
  std::vector<PointCosts> feasible;      // by index
  std::optional<PointCosts> fastest;     // most tokens per second
  std::optional<PointCosts> cheapest;    // fewest dollars per million tokens
  std::vector<PointCosts> pareto_front;  // by time, rising; cost falling
};

// `lines` are point lines (point_runner.hpp), in any order.
SweepSummary summarize(const std::vector<nlohmann::json>& lines, std::size_t points);

std::string summary_text(const SweepSummary& summary,
                         const std::vector<nlohmann::json>& lines_by_index);
nlohmann::json summary_json(const SweepSummary& summary,
                            const std::vector<nlohmann::json>& lines_by_index);

}  // namespace hetsim::sweep

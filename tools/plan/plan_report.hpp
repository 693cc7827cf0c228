#pragma once
// What `hetsim plan` prints: the top plans with why each ranks where it does (bubble, exposed
// communication, compute, memory headroom, against the best), the GPU subsets tried with the
// best plan on each and what leaving GPUs out gained or cost, and the search's counts.
#include <nlohmann/json.hpp>
#include <string>

#include "tools/plan/plan_search.hpp"

namespace hetsim::plan {

// The figures a row shows, read from a simulated outcome's report.
struct PlanFigures {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double usd_per_million_tokens = 0;
  double peak_memory_gib = 0;
  double headroom_gib = 0;  // least free HBM over the GPUs used
  double bubble_fraction = 0;
  double bubble_s = 0;        // bubble_fraction x pipeline time
  double exposed_comm_s = 0;  // data-parallel reduction the backward did not hide (worst rank)
  double compute_s = 0;       // the rest of the iteration
  double wan_gb = 0;          // bytes over WAN links per iteration, 1e9
};
PlanFigures plan_figures(const PlanOutcome& outcome);

// One line on why `outcome` ranks below `best` (or what makes `best` the best).
std::string why_text(const PlanOutcome& outcome, const PlanOutcome& best, Objective objective);

std::string plan_text(const PlanSearchResult& result, const PlanSearchOptions& options);
nlohmann::json plan_json(const PlanSearchResult& result, const PlanSearchOptions& options);

}  // namespace hetsim::plan

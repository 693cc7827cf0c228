#pragma once
// Branch and bound over the plan space: candidates that cannot fit in memory (plan_bounds.hpp)
// or whose GPUs cost more per hour than the budget are dropped; the rest are simulated in order
// of their lower bound, in batches on the sweep's thread pool (tools/sweep/point_runner.hpp),
// and a candidate is skipped once its bound is worse than both the k-th best simulated so far
// and the best simulated on its own GPU subset, so the top k and every subset's best are exact.
// Batches are fixed before they run, so the result does not depend on thread timing.
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "tools/plan/plan_bounds.hpp"
#include "tools/plan/plan_space.hpp"

namespace hetsim::plan {

enum class Objective { kTime, kCost };  // iteration time, or dollars per million tokens

struct PlanSearchOptions {
  PlanSpaceOptions space;
  Objective objective = Objective::kTime;
  std::optional<double> budget_usd_per_hour;  // GPUs used may cost at most this
  std::size_t top = 10;
  int jobs = 1;
  bool prune = true;  // false: simulate every candidate that fits (brute force)
  // Called once the space is enumerated, before any candidate is bounded or simulated, with
  // the candidates and GPU subsets found (the command line tells a large search's size first).
  std::function<void(std::size_t candidates, const std::vector<GpuSubset>& subsets)> on_enumerated;
};

// One candidate with what is known of it.
struct PlanOutcome {
  std::size_t index = 0;  // in enumeration order
  PlanCandidate candidate;
  PlanBounds bounds;
  bool simulated = false;
  nlohmann::json report;  // `run --json`'s report, when simulated without error
  std::string error;      // why the simulation refused it
  bool feasible() const { return simulated && error.empty() && report.at("oom").empty(); }
  double objective(Objective o) const;  // from the report
  double bound(Objective o) const;      // from the bounds
};

struct PlanSearchResult {
  std::vector<GpuSubset> subsets;
  std::vector<PlanOutcome> outcomes;  // every candidate, enumeration order
  std::size_t enumerated = 0;
  std::size_t pruned_memory = 0;
  std::size_t over_budget = 0;
  std::size_t pruned_bound = 0;
  std::size_t refused = 0;  // the plan's flags refused before any simulation
  std::size_t simulated = 0;
  std::size_t simulation_refused = 0;  // simulated, but refused by the simulation
  std::size_t out_of_memory = 0;       // simulated, but some GPU ran out of memory
  std::vector<std::size_t> ranking;  // feasible outcomes, best first (ties: lower index)
  std::vector<std::optional<std::size_t>> best_per_subset;  // outcome index per subset
  std::vector<std::size_t> candidates_per_subset;           // enumerated on each subset
  double wall_s = 0;
};

// Loads the cluster and model of `options.space`, searches and ranks. Throws Error for bad
// input (files, flags) and when no candidate exists at all.
PlanSearchResult search_plans(const GpuCatalog& catalog, const PlanSearchOptions& options);

}  // namespace hetsim::plan

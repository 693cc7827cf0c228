// Branch and bound over the candidates of plan_space.hpp, simulating on the sweep's runner.
#include "tools/plan/plan_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "base/error.hpp"
#include "models/transformer_config.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "tools/sweep/point_runner.hpp"
#include "tools/sweep/sweep_spec.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::plan {

double PlanOutcome::objective(Objective o) const {
  return o == Objective::kTime ? report.at("iteration_time_s").get<double>()
                               : report.at("cost_usd").at("per_million_tokens").get<double>();
}

double PlanOutcome::bound(Objective o) const {
  return o == Objective::kTime ? bounds.time_s : bounds.usd_per_million_tokens();
}

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Candidates run per batch: enough to keep every thread busy, few enough that the bound
// tightens often.
std::size_t batch_size(int jobs) { return static_cast<std::size_t>(std::max(2 * jobs, 4)); }

// Runs `batch` (indexes into `spec`'s points and `result.outcomes`) and records the lines.
void simulate_batch(const sweep::SweepSpec& spec, const GpuCatalog& catalog,
                    const std::vector<std::size_t>& batch, int jobs, PlanSearchResult& result) {
  sweep::PointRunner runner(spec, catalog, batch, jobs);
  while (!runner.done()) {
    for (const nlohmann::json& line : runner.take(std::chrono::milliseconds(50))) {
      PlanOutcome& outcome = result.outcomes.at(line.at("index").get<std::size_t>());
      outcome.simulated = true;
      if (line.contains("error"))
        outcome.error = line.at("error").get<std::string>();
      else
        outcome.report = line.at("report");
    }
  }
}

}  // namespace

PlanSearchResult search_plans(const GpuCatalog& shipped, const PlanSearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ClusterSpec cluster = load_cluster_spec(options.space.cluster_file, shipped.keys());
  // The bounds read the cluster's own GPU types too; the simulated points load them again with
  // the cluster (sweep's job cache), from the shipped catalog.
  const GpuCatalog catalog = catalog_with_cluster_types(shipped, cluster);
  const TransformerConfig model = load_transformer_config(options.space.model_file);
  PlanSearchResult result;
  result.subsets = gpu_subsets(cluster, catalog);
  const std::vector<PlanCandidate> candidates =
      enumerate_candidates(model, result.subsets, options.space);
  if (candidates.empty())
    throw Error(fmt::format(
        "no plan of {} on {} divides --gbs {} over the GPUs: choose a "
        "global batch with more factors of two",
        options.space.model_file, options.space.cluster_file, options.space.global_batch_size));
  result.enumerated = candidates.size();
  if (options.on_enumerated) options.on_enumerated(candidates.size(), result.subsets);
  result.best_per_subset.assign(result.subsets.size(), std::nullopt);
  result.candidates_per_subset.assign(result.subsets.size(), 0);
  for (const PlanCandidate& c : candidates) ++result.candidates_per_subset[c.subset];

  sweep::SweepSpec spec;
  spec.file = options.space.cluster_file;
  std::vector<std::size_t> queue;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    PlanOutcome outcome;
    outcome.index = i;
    outcome.candidate = candidates[i];
    const GpuSubset& subset = result.subsets[candidates[i].subset];
    spec.add_point(candidates[i].point(options.space, subset));
    try {
      outcome.bounds = plan_bounds(model, catalog, subset, candidates[i], options.space);
      if (!outcome.bounds.fits())
        ++result.pruned_memory;
      else if (options.budget_usd_per_hour && subset.usd_per_hour > *options.budget_usd_per_hour)
        ++result.over_budget;
      else
        queue.push_back(i);
    } catch (const Error& e) {
      outcome.error = e.what();
      ++result.refused;
    }
    result.outcomes.push_back(std::move(outcome));
  }
  const Objective objective = options.objective;
  std::stable_sort(queue.begin(), queue.end(), [&](std::size_t a, std::size_t b) {
    return result.outcomes[a].bound(objective) < result.outcomes[b].bound(objective);
  });

  const auto better = [&](std::size_t a, std::size_t b) {
    const double oa = result.outcomes[a].objective(objective);
    const double ob = result.outcomes[b].objective(objective);
    return oa != ob ? oa < ob : a < b;
  };
  std::size_t next = 0;
  while (next < queue.size()) {
    const double kth = result.ranking.size() >= options.top
                           ? result.outcomes[result.ranking[options.top - 1]].objective(objective)
                           : kInfinity;
    std::vector<std::size_t> batch;
    for (; next < queue.size() && batch.size() < batch_size(options.jobs); ++next) {
      const PlanOutcome& outcome = result.outcomes[queue[next]];
      const std::optional<std::size_t>& own = result.best_per_subset[outcome.candidate.subset];
      const double own_best = own ? result.outcomes[*own].objective(objective) : kInfinity;
      // Its simulated value is at least its bound, so it can enter neither the top k nor beat
      // its subset's best: skipping it changes neither.
      if (options.prune && outcome.bound(objective) > kth && outcome.bound(objective) > own_best) {
        ++result.pruned_bound;
        continue;
      }
      batch.push_back(queue[next]);
    }
    if (batch.empty()) continue;
    simulate_batch(spec, shipped, batch, options.jobs, result);
    result.simulated += batch.size();
    for (const std::size_t i : batch) {
      const PlanOutcome& outcome = result.outcomes[i];
      if (!outcome.error.empty()) {
        ++result.simulation_refused;
        continue;
      }
      if (!outcome.feasible()) {
        ++result.out_of_memory;
        continue;
      }
      result.ranking.push_back(i);
      std::optional<std::size_t>& own = result.best_per_subset[outcome.candidate.subset];
      if (!own || better(i, *own)) own = i;
    }
    std::sort(result.ranking.begin(), result.ranking.end(), better);
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace hetsim::plan

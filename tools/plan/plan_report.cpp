// The table, the GPU subsets and the counts of a plan search, as text and JSON.
#include "tools/plan/plan_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hetsim::plan {

namespace {

double max_of(const nlohmann::json& values) {
  double m = 0;
  for (const nlohmann::json& v : values) m = std::max(m, v.get<double>());
  return m;
}

const char* objective_name(Objective o) { return o == Objective::kTime ? "time" : "cost"; }

double value_of(const PlanFigures& f, Objective o) {
  return o == Objective::kTime ? f.iteration_time_s : f.usd_per_million_tokens;
}

std::string subset_name(const GpuSubset& subset) {
  return subset.left_out.empty() ? "every GPU" : "without " + subset.left_out_text;
}

// Why a subset has no best plan: no candidate divides its GPUs and the batch, or none that
// does fits in memory and runs.
std::string no_plan_reason(const PlanSearchResult& result, std::size_t s,
                           const PlanSearchOptions& options) {
  const GpuSubset& subset = result.subsets[s];
  if (result.candidates_per_subset[s] == 0)
    return fmt::format("no plan: {} GPUs split into tp x pp x dp with no dp dividing --gbs {}",
                       subset.gpus, options.space.global_batch_size);
  return fmt::format("none of its {} plans fits in memory and runs",
                     result.candidates_per_subset[s]);
}

// A sentence on what leaving GPUs out of `all` does, from the best plans with and without.
std::string left_out_reason(const PlanOutcome& with_subset, const GpuSubset& subset,
                            const PlanOutcome* all_gpus, Objective objective,
                            const std::string& no_plan_on_all) {
  if (all_gpus == nullptr)
    return fmt::format("leaves out {}; with every GPU: {}", subset.left_out_text, no_plan_on_all);
  const PlanFigures a = plan_figures(*all_gpus);
  const PlanFigures s = plan_figures(with_subset);
  const char* unit = objective == Objective::kTime ? "s per iteration" : "$ per million tokens";
  std::string why = fmt::format(
      "leaves out {}: {:.3f} {} against {:.3f} for the best plan on every GPU ({}: bubble "
      "{:.1f}%, exposed comm {:.3f} s",
      subset.left_out_text, value_of(s, objective), unit, value_of(a, objective),
      all_gpus->candidate.text(), 100 * a.bubble_fraction, a.exposed_comm_s);
  if (a.wan_gb > s.wan_gb) why += fmt::format(", {:.1f} GB over WAN per iteration", a.wan_gb);
  return why + ")";
}

}  // namespace

PlanFigures plan_figures(const PlanOutcome& outcome) {
  const nlohmann::json& r = outcome.report;
  PlanFigures f;
  f.iteration_time_s = r.at("iteration_time_s").get<double>();
  f.tokens_per_s = r.at("tokens_per_s").get<double>();
  f.usd_per_million_tokens = r.at("cost_usd").at("per_million_tokens").get<double>();
  f.peak_memory_gib = r.at("peak_memory_gib").at("max").get<double>();
  f.headroom_gib = std::numeric_limits<double>::infinity();
  for (const nlohmann::json& gpu : r.at("peak_memory_gib").at("per_gpu"))
    f.headroom_gib = std::min(
        f.headroom_gib, gpu.at("capacity_gib").get<double>() - gpu.at("need_gib").get<double>());
  f.bubble_fraction = r.at("bubble_fraction").get<double>();
  f.bubble_s = f.bubble_fraction * r.at("pipeline_time_s").get<double>();
  f.exposed_comm_s = max_of(r.at("gradient_reduce_exposed_s_per_rank"));
  f.compute_s = std::max(0.0, f.iteration_time_s - f.bubble_s - f.exposed_comm_s);
  f.wan_gb = r.at("link_bytes_per_iteration").at("wan").get<double>() / 1e9;
  return f;
}

std::string why_text(const PlanOutcome& outcome, const PlanOutcome& best, Objective objective) {
  const PlanFigures f = plan_figures(outcome);
  const PlanFigures b = plan_figures(best);
  std::string why;
  if (&outcome == &best) {
    why = fmt::format("best {}: bubble {:.1f}%, exposed comm {:.3f} s", objective_name(objective),
                      100 * f.bubble_fraction, f.exposed_comm_s);
  } else {
    // The part of the iteration that grew most against the best plan.
    const std::array<std::pair<double, const char*>, 3> parts = {{
        {f.bubble_s - b.bubble_s, "pipeline bubble"},
        {f.exposed_comm_s - b.exposed_comm_s, "exposed communication"},
        {f.compute_s - b.compute_s, "compute (recompute, TP collectives, GEMM sizes, GPUs)"},
    }};
    const auto worst = std::max_element(
        parts.begin(), parts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    why = fmt::format("+{:.1f}% {}", 100 * (value_of(f, objective) / value_of(b, objective) - 1),
                      objective_name(objective));
    if (value_of(f, objective) == value_of(b, objective))
      why = fmt::format("ties with #1 on {}; listed after it in the order plans are enumerated",
                        objective_name(objective));
    else if (worst->first > 0)
      why += fmt::format(": {} +{:.3f} s", worst->second, worst->first);
    else
      why += ": fewer tokens per dollar from the GPUs it uses";
  }
  if (f.headroom_gib < 0.1 * f.peak_memory_gib)
    why += fmt::format("; only {:.1f} GiB memory headroom", f.headroom_gib);
  return why;
}

std::string plan_text(const PlanSearchResult& result, const PlanSearchOptions& options) {
  const Objective objective = options.objective;
  std::string out = fmt::format(
      "plan search ({}): {} candidates on {} GPU subsets; {} pruned by memory, {} over budget, "
      "{} refused, {} pruned by bound, {} simulated ({} ran, {} refused by the simulation, {} out of "
      "memory) in {:.1f} s, {:.1f} points/s\n\n",
      objective_name(objective), result.enumerated, result.subsets.size(), result.pruned_memory,
      result.over_budget, result.refused, result.pruned_bound, result.simulated, result.ranking.size(),
      result.simulation_refused, result.out_of_memory, result.wall_s,
      result.wall_s > 0 ? result.simulated / result.wall_s : 0.0);
  if (result.ranking.empty()) {
    out += "no candidate fits in memory and runs";
    // When every candidate was refused, the first one's reason is every one's in kind.
    if (result.refused == result.enumerated && !result.outcomes.empty())
      out += ": the first was refused: " + result.outcomes.front().error;
    return out + "\n";
  }
  const PlanOutcome& best = result.outcomes[result.ranking.front()];
  const std::size_t shown = std::min(options.top, result.ranking.size());
  // Plans on different subsets can read alike: each row names the GPUs it leaves out, and the
  // column widens to the longest row.
  std::vector<std::string> plans;
  std::size_t width = 64;
  for (std::size_t k = 0; k < shown; ++k) {
    const PlanOutcome& o = result.outcomes[result.ranking[k]];
    std::string plan = o.candidate.text();
    const GpuSubset& subset = result.subsets[o.candidate.subset];
    if (!subset.left_out.empty())
      plan += fmt::format(" ({} GPUs, without {})", subset.gpus, fmt::join(subset.left_out, ", "));
    width = std::max(width, plan.size());
    plans.push_back(std::move(plan));
  }
  out += fmt::format("{:>4}  {:<{}} {:>9} {:>10} {:>8} {:>15} {:>7} {:>9}  {}\n", "rank", "plan", width,
                     "iter s", "tokens/s", "$/Mtok", "peak/free GiB", "bubble", "exp.comm", "why");
  for (std::size_t k = 0; k < shown; ++k) {
    const PlanOutcome& o = result.outcomes[result.ranking[k]];
    const PlanFigures f = plan_figures(o);
    out += fmt::format(
        "{:>4}  {:<{}} {:>9.3f} {:>10.0f} {:>8.3f} {:>7.1f}/{:<7.1f} {:>6.1f}% {:>9.3f}  {}\n",
        k + 1, plans[k], width, f.iteration_time_s, f.tokens_per_s, f.usd_per_million_tokens,
        f.peak_memory_gib, f.headroom_gib, 100 * f.bubble_fraction, f.exposed_comm_s,
        why_text(o, best, objective));
  }
  if (result.subsets.size() > 1) {
    out += "\nGPU subsets (best plan on each):\n";
    const std::optional<std::size_t>& all = result.best_per_subset.front();
    const PlanOutcome* all_best = all ? &result.outcomes[*all] : nullptr;
    for (std::size_t s = 0; s < result.subsets.size(); ++s) {
      const GpuSubset& subset = result.subsets[s];
      const std::optional<std::size_t>& own = result.best_per_subset[s];
      if (!own) {
        out += fmt::format("  {} GPUs, {}: {}\n", subset.gpus, subset_name(subset),
                           no_plan_reason(result, s, options));
        continue;
      }
      const PlanOutcome& o = result.outcomes[*own];
      const PlanFigures f = plan_figures(o);
      out += fmt::format(
          "  {} GPUs, {}: {} {:.3f} s, {:.0f} tokens/s, ${:.3f}/Mtok ({:+.1f}% {})\n", subset.gpus,
          subset_name(subset), o.candidate.text(), f.iteration_time_s, f.tokens_per_s,
          f.usd_per_million_tokens, 100 * (o.objective(objective) / best.objective(objective) - 1),
          objective_name(objective));
    }
    const GpuSubset& chosen = result.subsets[best.candidate.subset];
    out += chosen.left_out.empty() ? "The best plan uses every GPU.\n"
                                   : "The best plan " +
                                         left_out_reason(best, chosen, all_best, objective,
                                                         no_plan_reason(result, 0, options)) +
                                         ".\n";
  }
  return out;
}

nlohmann::json plan_json(const PlanSearchResult& result, const PlanSearchOptions& options) {
  const Objective objective = options.objective;
  nlohmann::json top = nlohmann::json::array();
  const std::size_t shown = std::min(options.top, result.ranking.size());
  for (std::size_t k = 0; k < shown; ++k) {
    const PlanOutcome& o = result.outcomes[result.ranking[k]];
    const PlanFigures f = plan_figures(o);
    const GpuSubset& subset = result.subsets[o.candidate.subset];
    top.push_back({{"rank", k + 1},
                   {"plan", o.candidate.point(options.space, subset)},
                   {"gpus", subset.gpus},
                   {"left_out", subset.left_out},
                   {"iteration_time_s", f.iteration_time_s},
                   {"tokens_per_s", f.tokens_per_s},
                   {"usd_per_million_tokens", f.usd_per_million_tokens},
                   {"peak_memory_gib", f.peak_memory_gib},
                   {"headroom_gib", f.headroom_gib},
                   {"bubble_fraction", f.bubble_fraction},
                   {"exposed_comm_s", f.exposed_comm_s},
                   {"lower_bound", o.bound(objective)},
                   {"why", why_text(o, result.outcomes[result.ranking.front()], objective)}});
  }
  nlohmann::json subsets = nlohmann::json::array();
  for (std::size_t s = 0; s < result.subsets.size(); ++s) {
    const GpuSubset& subset = result.subsets[s];
    nlohmann::json entry{{"gpus", subset.gpus}, {"left_out", subset.left_out}, {"best", nullptr}};
    if (const auto& own = result.best_per_subset[s]) {
      const PlanOutcome& o = result.outcomes[*own];
      entry["best"] = {{"plan", o.candidate.text()}, {"objective", o.objective(objective)}};
    } else {
      entry["why_none"] = no_plan_reason(result, s, options);
    }
    subsets.push_back(std::move(entry));
  }
  return {{"objective", objective_name(objective)},
          {"candidates", result.enumerated},
          {"pruned_by_memory", result.pruned_memory},
          {"over_budget", result.over_budget},
          {"refused", result.refused},
          {"pruned_by_bound", result.pruned_bound},
          {"simulated", result.simulated},
          {"ran", result.ranking.size()},
          {"simulation_refused", result.simulation_refused},
          {"out_of_memory", result.out_of_memory},
          {"wall_s", result.wall_s},
          {"top", top},
          {"subsets", subsets}};
}

}  // namespace hetsim::plan

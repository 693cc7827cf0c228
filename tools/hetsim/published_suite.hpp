#pragma once
// The published runs of tests/data/published-runs/training-runs.json, each replayed as
// tests/validation/published_runs.json maps it: a `hetsim run` job (sweep keys, so a key means
// exactly what the flag of that name means), a node count for the cluster file's first node
// group, the measured figure it is judged on, and why each value was chosen. A case hetsim
// cannot express yet is listed there with the reason and reported as not run.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace hetsim::validation {

struct PublishedCase {
  std::string id;
  std::string category;  // the data file's category
  std::string source;    // paper or repository, table, URL
  std::string metric;    // "iteration_time_s" or "tokens_per_s"
  double measured = 0;
  // The case whose figure this one is judged against as an increase (a shaped network against
  // the unshaped one); empty: none.
  std::string baseline;
  // Cases of one `rank_group` (a category's GPU set or node count) are also judged on whether
  // the simulated fastest is the measured fastest; empty: not ranked.
  std::string rank_group;
  nlohmann::json run;  // sweep keys: the job
  int nodes = 0;       // the cluster file's first node group resized to this many nodes; 0: as is
  std::string mapping;
};

struct NotExpressible {
  std::string id;
  std::string category;
  std::string why;
};

struct PublishedResult {
  PublishedCase case_;
  double simulated = 0;  // in the metric's unit
  double error_percent = 0;
  double iteration_time_s = 0;
  double tokens_per_iteration = 0;  // of the run, for comparing plans of different batches
  // With a baseline: the increase of the iteration time over the baseline's, measured and
  // simulated, and the error of the simulated increase in percent of the measured one.
  bool has_increase = false;
  double measured_increase_s = 0;
  double simulated_increase_s = 0;
  double increase_error_percent = 0;
};

struct CategorySummary {
  std::string category;
  int cases = 0;
  double mean_abs_error_percent = 0;
  double max_abs_error_percent = 0;
  // Largest |increase error| over the category's cases with a baseline (0 when none).
  double max_abs_increase_error_percent = 0;
  // Signed error of the case with the most GPUs less that of the one with the fewest.
  double signed_drift_percent = 0;
  // Rank groups whose simulated fastest case is not the measured fastest.
  std::vector<std::string> misranked_groups;
  int rank_groups = 0;
};

struct PublishedSuiteResult {
  std::vector<PublishedResult> cases;
  std::vector<NotExpressible> not_run;
  std::vector<CategorySummary> categories;  // in order of first appearance
};

// Loads the mapping and the measurements under `data_dir` (the repository root) and replays
// every mapped case. Throws InputError for a mapping that names an unknown case or key.
PublishedSuiteResult run_published_suite(const std::string& data_dir);

std::string published_suite_table(const PublishedSuiteResult& result);
nlohmann::json published_suite_json(const PublishedSuiteResult& result);

}  // namespace hetsim::validation

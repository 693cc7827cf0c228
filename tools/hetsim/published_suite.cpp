#include "tools/hetsim/published_suite.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "base/error.hpp"
#include "base/json_input.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "sim/training_run.hpp"
#include "tools/sweep/point_job.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::validation {

namespace {

constexpr const char* kMappingFile = "tests/validation/published_runs.json";
constexpr const char* kRunsFile = "tests/data/published-runs/training-runs.json";

struct Measured {
  std::string category;
  std::string source;
  nlohmann::json figures;  // the case's "measured" object
};

std::map<std::string, Measured> load_measurements(const std::string& path) {
  const nlohmann::json doc = read_json_file(path);
  const JsonInput cases = JsonInput(doc, path).at("cases");
  std::map<std::string, Measured> by_id;
  for (std::size_t i = 0; i < cases.array_size(); ++i) {
    const JsonInput c = cases.at(i);
    const JsonInput source = c.at("source");
    by_id[c.string("id")] = {c.string("category"),
                             fmt::format("{}, {} ({})", source.string("paper"),
                                         source.string("table"), source.string("url")),
                             c.at("measured").value()};
  }
  return by_id;
}

// The case's measured figure of `metric`, which the data file must give as a positive number.
double measured_figure(const JsonInput& mapping, const Measured& m, const std::string& metric) {
  if (metric != "iteration_time_s" && metric != "tokens_per_s")
    mapping.fail_member("metric", "\"iteration_time_s\" or \"tokens_per_s\"");
  // The data file names seconds per iteration "iter_time_s".
  const auto it = m.figures.find(metric == "iteration_time_s" ? "iter_time_s" : metric);
  if (it == m.figures.end() || !it->is_number() || !(it->get<double>() > 0))
    mapping.fail_member("metric", "a figure the published case measured (" + metric + " is not given)");
  return it->get<double>();
}

std::pair<std::vector<PublishedCase>, std::vector<NotExpressible>> load_mapping(
    const std::string& data_dir) {
  const std::map<std::string, Measured> measured = load_measurements(data_dir + "/" + kRunsFile);
  const std::string path = data_dir + "/" + kMappingFile;
  const nlohmann::json doc = read_json_file(path);
  const JsonInput root(doc, path);
  root.reject_unknown_keys({"description", "cases", "not_expressible"});
  const auto known = [&](const JsonInput& entry) -> const Measured& {
    const std::string id = entry.string("id");
    const auto it = measured.find(id);
    if (it == measured.end()) entry.fail_member("id", "a case id of " + std::string(kRunsFile));
    return it->second;
  };
  std::vector<PublishedCase> cases;
  const JsonInput list = root.at("cases");
  for (std::size_t i = 0; i < list.array_size(); ++i) {
    const JsonInput entry = list.at(i);
    entry.reject_unknown_keys({"id", "metric", "baseline", "rank_group", "nodes", "run", "mapping"});
    const Measured& m = known(entry);
    PublishedCase c;
    c.id = entry.string("id");
    c.category = m.category;
    c.source = m.source;
    c.metric = entry.string("metric");
    c.measured = measured_figure(entry, m, c.metric);
    c.baseline = entry.string_or("baseline", "");
    c.rank_group = entry.string_or("rank_group", "");
    c.nodes = static_cast<int>(entry.integer_or("nodes", 0));
    if (c.nodes < 0) entry.fail_member("nodes", "a node count >= 1 (or 0: as the cluster file)");
    c.run = entry.at("run").value();
    if (!c.run.is_object()) entry.at("run").fail("an object of `hetsim run` flag names to values");
    c.mapping = entry.string("mapping");
    cases.push_back(std::move(c));
  }
  for (const PublishedCase& c : cases) {
    if (c.baseline.empty()) continue;
    if (std::none_of(cases.begin(), cases.end(), [&](const PublishedCase& b) { return b.id == c.baseline; }))
      throw InputError(path, "/cases", c.baseline, "a baseline that is itself a mapped case");
  }
  std::vector<NotExpressible> not_run;
  const JsonInput skipped = root.at("not_expressible");
  for (std::size_t i = 0; i < skipped.array_size(); ++i) {
    const JsonInput entry = skipped.at(i);
    entry.reject_unknown_keys({"id", "why"});
    not_run.push_back({entry.string("id"), known(entry).category, entry.string("why")});
  }
  return {cases, not_run};
}

struct Simulated {
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_iteration = 0;
  int gpus = 0;
};

Simulated simulate(const PublishedCase& c, const std::string& data_dir, const GpuCatalog& catalog) {
  const sweep::PointJob job = sweep::parse_point_job(c.run);
  ClusterSpec spec = load_cluster_spec(data_dir + "/" + job.args.cluster, catalog.keys());
  job.variation.apply(spec);
  if (c.nodes > 0) spec.sites.at(0).node_groups.at(0).count = c.nodes;
  const Cluster cluster = build_cluster(spec);
  const GpuCatalog gpus = catalog_with_cluster_types(catalog, spec);
  const TransformerConfig model = load_transformer_config(data_dir + "/" + job.args.model);
  const RunOptions options = cli::resolve_run_options(job.args, model);
  const RunResult run = simulate_training(cluster, gpus, model, options);
  return {run.iteration_time_s, run.tokens_per_s, run.tokens_per_iteration, cluster.gpu_count()};
}

// Seconds per token of a case's measured or simulated figure: plans of one rank group may
// train different global batches, so the fastest is the one with the most tokens per second.
double seconds_per_token(const PublishedResult& r, double figure) {
  if (r.case_.metric == "tokens_per_s") return 1 / figure;
  return figure / r.tokens_per_iteration;
}

void summarise(PublishedSuiteResult& result, const std::map<std::string, int>& gpus) {
  for (const PublishedResult& r : result.cases) {
    auto it = std::find_if(result.categories.begin(), result.categories.end(),
                           [&](const CategorySummary& s) { return s.category == r.case_.category; });
    if (it == result.categories.end()) {
      result.categories.push_back(CategorySummary{r.case_.category, 0, 0, 0, 0, 0, {}, 0});
      it = result.categories.end() - 1;
    }
    const double abs_error = std::fabs(r.error_percent);
    it->cases += 1;
    it->mean_abs_error_percent += abs_error;  // a sum until divided below
    it->max_abs_error_percent = std::max(it->max_abs_error_percent, abs_error);
    if (r.has_increase)
      it->max_abs_increase_error_percent =
          std::max(it->max_abs_increase_error_percent, std::fabs(r.increase_error_percent));
  }
  for (CategorySummary& s : result.categories) {
    s.mean_abs_error_percent /= s.cases;
    // Drift: the signed error at the most GPUs less that at the fewest (first listed on ties).
    const PublishedResult* fewest = nullptr;
    const PublishedResult* most = nullptr;
    std::map<std::string, std::pair<const PublishedResult*, const PublishedResult*>> fastest;
    for (const PublishedResult& r : result.cases) {
      if (r.case_.category != s.category) continue;
      const int n = gpus.at(r.case_.id);
      if (!fewest || n < gpus.at(fewest->case_.id)) fewest = &r;
      if (!most || n > gpus.at(most->case_.id)) most = &r;
      if (r.case_.rank_group.empty()) continue;
      auto& [measured, simulated] = fastest[r.case_.rank_group];
      if (!measured || seconds_per_token(r, r.case_.measured) < seconds_per_token(*measured, measured->case_.measured))
        measured = &r;
      if (!simulated || seconds_per_token(r, r.simulated) < seconds_per_token(*simulated, simulated->simulated))
        simulated = &r;
    }
    s.signed_drift_percent = most->error_percent - fewest->error_percent;
    s.rank_groups = static_cast<int>(fastest.size());
    for (const auto& [group, pair] : fastest)
      if (pair.first != pair.second) s.misranked_groups.push_back(group);
  }
}

}  // namespace

PublishedSuiteResult run_published_suite(const std::string& data_dir) {
  const GpuCatalog catalog = GpuCatalog::load(data_dir + "/models/gpus");
  auto [cases, not_run] = load_mapping(data_dir);
  PublishedSuiteResult result;
  result.not_run = std::move(not_run);
  std::map<std::string, int> gpus;
  for (const PublishedCase& c : cases) {
    Simulated s;
    try {
      s = simulate(c, data_dir, catalog);
    } catch (const Error& e) {
      throw Error(fmt::format("published case {}: {}", c.id, e.what()));
    }
    PublishedResult r;
    r.case_ = c;
    r.iteration_time_s = s.iteration_time_s;
    r.simulated = c.metric == "tokens_per_s" ? s.tokens_per_s : s.iteration_time_s;
    r.error_percent = (r.simulated - c.measured) / c.measured * 100;
    r.tokens_per_iteration = s.tokens_per_iteration;
    gpus[c.id] = s.gpus;
    result.cases.push_back(r);
  }
  for (PublishedResult& r : result.cases) {
    if (r.case_.baseline.empty()) continue;
    const PublishedResult& b = *std::find_if(result.cases.begin(), result.cases.end(),
                                             [&](const PublishedResult& x) { return x.case_.id == r.case_.baseline; });
    r.has_increase = true;
    r.measured_increase_s = r.case_.measured - b.case_.measured;
    r.simulated_increase_s = r.iteration_time_s - b.iteration_time_s;
    r.increase_error_percent = (r.simulated_increase_s - r.measured_increase_s) / r.measured_increase_s * 100;
  }
  summarise(result, gpus);
  return result;
}

std::string published_suite_table(const PublishedSuiteResult& result) {
  std::string out = fmt::format("{:<20} {:<40} {:>12} {:>12} {:>8}  {}\n", "category", "case", "measured",
                                "simulated", "error", "metric");
  for (const PublishedResult& r : result.cases) {
    out += fmt::format("{:<20} {:<40} {:>12.4g} {:>12.4g} {:>+7.1f}%  {}", r.case_.category, r.case_.id,
                       r.case_.measured, r.simulated, r.error_percent, r.case_.metric);
    if (r.has_increase)
      out += fmt::format("; increase over {}: measured {:+.2f} s, simulated {:+.2f} s ({:+.0f}%)",
                         r.case_.baseline, r.measured_increase_s, r.simulated_increase_s,
                         r.increase_error_percent);
    out += "\n";
  }
  out += "\n";
  for (const CategorySummary& s : result.categories) {
    out += fmt::format("{}: {} case{}, mean |error| {:.1f}%, max |error| {:.1f}%, signed drift {:+.1f} points "
                       "(most GPUs less fewest)",
                       s.category, s.cases, s.cases == 1 ? "" : "s", s.mean_abs_error_percent,
                       s.max_abs_error_percent, s.signed_drift_percent);
    if (s.max_abs_increase_error_percent > 0)
      out += fmt::format(", max |increase error| {:.0f}%", s.max_abs_increase_error_percent);
    if (s.rank_groups > 0)
      out += fmt::format(", fastest plan picked in {} of {} groups", s.rank_groups - s.misranked_groups.size(),
                         s.rank_groups);
    out += "\n";
  }
  // Cases left out for one reason are listed together, the reason once.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (const NotExpressible& n : result.not_run) {
    const std::string key = n.category + ": " + n.why;
    auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& e) { return e.first == key; });
    if (it == by_reason.end()) it = by_reason.insert(by_reason.end(), {key, {}});
    it->second.push_back(n.id);
  }
  for (const auto& [reason, ids] : by_reason)
    out += fmt::format("not run ({}): {}\n", fmt::join(ids, ", "), reason);
  return out;
}

nlohmann::json published_suite_json(const PublishedSuiteResult& result) {
  nlohmann::json cases = nlohmann::json::array();
  for (const PublishedResult& r : result.cases) {
    nlohmann::json c{{"id", r.case_.id},
                     {"category", r.case_.category},
                     {"source", r.case_.source},
                     {"metric", r.case_.metric},
                     {"measured", r.case_.measured},
                     {"simulated", r.simulated},
                     {"error_percent", r.error_percent},
                     {"iteration_time_s", r.iteration_time_s},
                     {"run", r.case_.run},
                     {"mapping", r.case_.mapping}};
    if (r.case_.nodes > 0) c["nodes"] = r.case_.nodes;
    if (r.has_increase)
      c["increase"] = {{"baseline", r.case_.baseline},
                       {"measured_s", r.measured_increase_s},
                       {"simulated_s", r.simulated_increase_s},
                       {"error_percent", r.increase_error_percent}};
    cases.push_back(std::move(c));
  }
  nlohmann::json categories = nlohmann::json::array();
  for (const CategorySummary& s : result.categories)
    categories.push_back({{"category", s.category},
                          {"cases", s.cases},
                          {"mean_abs_error_percent", s.mean_abs_error_percent},
                          {"max_abs_error_percent", s.max_abs_error_percent},
                          {"max_abs_increase_error_percent", s.max_abs_increase_error_percent},
                          {"signed_drift_percent", s.signed_drift_percent},
                          {"rank_groups", s.rank_groups},
                          {"misranked_groups", s.misranked_groups}});
  nlohmann::json not_run = nlohmann::json::array();
  for (const NotExpressible& n : result.not_run)
    not_run.push_back({{"id", n.id}, {"category", n.category}, {"why", n.why}});
  return {{"cases", cases}, {"categories", categories}, {"not_run", not_run}};
}

}  // namespace hetsim::validation

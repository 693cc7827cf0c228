// Simulating one sweep point, and the thread pool that runs many.
#include "tools/sweep/point_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "base/error.hpp"
#include "base/report_json.hpp"
#include "base/json_input.hpp"
#include "models/transformer_config.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "tools/sweep/point_job.hpp"
#include "topologies/cluster_loader.hpp"
#include "traces/run_report.hpp"

namespace hetsim::sweep {

namespace {

// Clusters and models one thread has loaded, by file (and cluster variation).
class JobCache {
 public:
  explicit JobCache(const GpuCatalog& catalog) : catalog_(catalog) {}

  // The shipped catalog with the GPU types of the cluster file at `path` (loaded by cluster()).
  const GpuCatalog& catalog(const std::string& path) const { return catalogs_.at(path); }

  const Cluster& cluster(const std::string& path, const ClusterVariation& variation) {
    const std::string key = path + "\n" + variation.cache_key();
    if (auto it = clusters_.find(key); it != clusters_.end()) return *it->second;
    auto spec = specs_.find(path);
    if (spec == specs_.end()) {
      spec = specs_.emplace(path, load_cluster_spec(path, catalog_.keys())).first;
      catalogs_.emplace(path, catalog_with_cluster_types(catalog_, spec->second));
    }
    ClusterSpec varied = spec->second;
    if (!variation.gpu_type.empty()) check_gpu_type(variation.gpu_type, catalogs_.at(path));
    variation.apply(varied);
    return *clusters_.emplace(key, std::make_unique<Cluster>(build_cluster(varied))).first->second;
  }

  const TransformerConfig& model(const std::string& path) {
    if (auto it = models_.find(path); it != models_.end()) return it->second;
    return models_.emplace(path, load_transformer_config(path)).first->second;
  }

 private:
  // `type` must be in `catalog`: the shipped types and the cluster file's own.
  static void check_gpu_type(const std::string& type, const GpuCatalog& catalog) {
    const std::vector<std::string> keys = catalog.keys();
    if (std::find(keys.begin(), keys.end(), type) != keys.end()) return;
    const std::string near = nearest_word(type, keys);
    throw Error(fmt::format(
        "{}: got \"{}\"; expected a GPU type of the catalog (models/gpus) or of the cluster's "
        "gpu_types{}",
        kGpuTypeKey, type, near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }

  const GpuCatalog& catalog_;
  std::map<std::string, ClusterSpec> specs_;
  std::map<std::string, GpuCatalog> catalogs_;  // by cluster file
  std::map<std::string, std::unique_ptr<Cluster>> clusters_;
  std::map<std::string, TransformerConfig> models_;
};

nlohmann::json run_point(const SweepSpec& spec, std::size_t index, JobCache& cache) {
  nlohmann::json line{{"index", index}, {"point", spec.point(index)}};
  try {
    const PointJob job = parse_point_job(spec.job(index));
    const Cluster& cluster = cache.cluster(job.args.cluster, job.variation);
    const TransformerConfig& model = cache.model(job.args.model);
    const RunOptions options = cli::resolve_run_options(job.args, model);
    const RunResult result = simulate_training(cluster, cache.catalog(job.args.cluster), model, options);
    nlohmann::json report = run_report_json(
        result,
        RunContext{job.args.cluster, job.args.model, model.name, cluster.gpu_count(), 0, "", model.ignored_fields});
    report.erase("wall_s");
    require_finite_report(report);  // as run --json does: the point's error, never a null
    line["report"] = std::move(report);
  } catch (const Error& e) {
    line["error"] = e.what();
  } catch (const std::exception& e) {
    // Not the point's fault, but one point must not end a sweep of thousands: recorded and shown.
    line["error"] = std::string("internal error: ") + e.what();
  }
  return line;
}

}  // namespace

PointRunner::PointRunner(const SweepSpec& spec, const GpuCatalog& catalog,
                         std::vector<std::size_t> indexes, int jobs)
    : spec_(spec), catalog_(catalog), indexes_(std::move(indexes)) {
  const std::size_t threads =
      std::min<std::size_t>(std::max(jobs, 1), std::max<std::size_t>(indexes_.size(), 1));
  for (std::size_t t = 0; t < threads; ++t) threads_.emplace_back([this] { work(); });
}

PointRunner::~PointRunner() {
  next_ = indexes_.size();  // no new points; the running ones finish
  for (std::thread& thread : threads_) thread.join();
}

void PointRunner::work() {
  JobCache cache(catalog_);
  for (std::size_t i = next_++; i < indexes_.size(); i = next_++) {
    nlohmann::json line = run_point(spec_, indexes_[i], cache);
    const std::lock_guard lock(mutex_);
    finished_.push_back(std::move(line));
    ready_.notify_one();
  }
}

std::vector<nlohmann::json> PointRunner::take(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, wait, [this] { return !finished_.empty(); });
  std::vector<nlohmann::json> lines(std::make_move_iterator(finished_.begin()),
                                    std::make_move_iterator(finished_.end()));
  finished_.clear();
  taken_ += lines.size();
  return lines;
}

}  // namespace hetsim::sweep

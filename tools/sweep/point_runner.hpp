#pragma once
// Runs sweep points on threads. Each point becomes one output line, a JSON object:
//   {"index": I, "point": {...its keys...}, "report": {...as `run --json`, without wall_s...}}
//   {"index": I, "point": {...}, "error": "why the point cannot run"}
// wall_s is left out so that the same point gives the same line in every run and process.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "tools/sweep/sweep_spec.hpp"

namespace hetsim::sweep {

// Runs `indexes` of `spec` on `jobs` threads; the calling thread collects the lines in the order
// they finish. Each thread keeps the clusters and models it has loaded for its next points.
class PointRunner {
 public:
  PointRunner(const SweepSpec& spec, const GpuCatalog& catalog, std::vector<std::size_t> indexes,
              int jobs);
  ~PointRunner();  // waits for the threads
  PointRunner(const PointRunner&) = delete;
  PointRunner& operator=(const PointRunner&) = delete;

  // The lines finished since the last call, waiting up to `wait` for one when none is ready.
  std::vector<nlohmann::json> take(std::chrono::milliseconds wait);
  // Every line has been returned by take().
  bool done() const { return taken_ == indexes_.size(); }

 private:
  void work();
  const SweepSpec& spec_;
  const GpuCatalog& catalog_;
  const std::vector<std::size_t> indexes_;
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<nlohmann::json> finished_;
  std::size_t taken_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace hetsim::sweep

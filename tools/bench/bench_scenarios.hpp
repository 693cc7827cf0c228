#pragma once
// The benchmark scenarios shared by `hetsim bench` and the bench_replay program: replays of one
// training iteration on scaled DGX H100 clusters, a flow-simulated ring all-reduce, and a bare
// binary-heap loop (the engine's events with no model behind them) to compare their event rates
// against. Each scenario is timed over repeats (median wall time), whole and its event loop alone
// (Engine::thread_loop_stats), with its own peak resident memory.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/training_run.hpp"

namespace hetsim::bench {

// What one repeat of a scenario did.
struct ScenarioRun {
  std::uint64_t events = 0;
  double simulated_s = 0;  // iteration or collective time, for a reader to recognise the case
};

struct Scenario {
  std::string name;         // short, for --scenario
  std::string description;  // one line: what is simulated
  std::function<ScenarioRun()> run;
};

// A copy of the shipped 128-node DGX H100 cluster with `nodes` nodes, written to a temporary file
// (the loader reads files) and removed with this object.
class ScaledCluster {
 public:
  ScaledCluster(const std::string& data_dir, int nodes);
  ~ScaledCluster();
  ScaledCluster(const ScaledCluster&) = delete;
  ScaledCluster& operator=(const ScaledCluster&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Megatron-style options with micro-batch 1, sequence parallelism and the distributed optimizer;
// first/last_layers 0 = the even split.
RunOptions replay_plan(int tp, int pp, int gbs, int seq, int first_layers, int last_layers);

// Llama-3-405B on 16,384 GPUs as Meta trained it (Dubey et al. 2024, "The Llama 3 Herd of
// Models", arXiv:2407.21783, Table 4: TP 8, CP 1, PP 16, DP 128, 8,192-token sequences, 16
// sequences per data-parallel rank, 16M tokens a batch; Sec. 3.3.2 for the 4D parallelism):
// replay_plan with 7 layers on the first and last stages, 8 on the others, and fused
// (FlashAttention-style) attention, which keeps no s^2 score tensors: without it each GPU of the
// first stage would keep 16 microbatches' scores, 297 GiB of 80; with it 78 GiB. The paper's
// interleaved schedule is left out, so that the replay keeps its event count.
RunOptions llama3_405b_16k_plan();

// Llama-3-70B with TP 8 x PP 8 (replay_plan, even split) and `gbs` 8,192-token sequences, with
// fused attention as Meta trained it (arXiv:2407.21783, Sec. 3.3): without it every GPU of the
// first stage would keep 8 microbatches' s^2 scores, 108.5 GiB of 80 at 1,024 GPUs; with it
// 28.5 GiB. The replay-1k scenario and bench_replay's 70B cases (1,024 to 65,536 GPUs).
RunOptions llama3_70b_plan(int gbs);

// One whole replay (cluster load, plan checks, costing, replay) of `model` (relative to the data
// directory) on the cluster file `cluster_file`; the GPU catalog is loaded once, beforehand.
ScenarioRun replay_once(const GpuCatalog& catalog, const std::string& cluster_file,
                        const std::string& model, const RunOptions& options);

// The scenarios of `hetsim bench` on the shipped clusters under `data_dir`; they share `catalog`,
// which must outlive them.
std::vector<Scenario> standard_scenarios(const std::string& data_dir, const GpuCatalog& catalog);

// The engine's events in a bare binary heap (std::priority_queue, the engine's (time, sequence)
// order) with no model behind them: `pending` + 1 events are queued, then `events` times the
// earliest is popped and one is pushed a pseudo-random delay (uniform in [0, 1) ms, mt19937_64
// seeded constantly) after it, so `pending` events wait after each pop, as in a simulation whose
// population stays level. Returns the time of the last event popped.
double bare_heap_loop(std::uint64_t events, std::size_t pending);

// Peak resident memory: reset_peak_rss() starts a new high-water mark where the kernel allows it
// (/proc/self/clear_refs); peak_rss_mib() reads it (VmHWM), falling back to getrusage's
// process-wide maximum. Returns whether the reset took effect.
bool reset_peak_rss();
double peak_rss_mib();

struct Measurement {
  std::string name;
  std::string description;
  std::uint64_t events = 0;
  double wall_s = 0;  // median of the repeats: the whole scenario (setup, loop, teardown)
  double events_per_s = 0;
  double loop_wall_s = 0;  // median of the repeats: inside Engine::run only
  double loop_events_per_s = 0;
  double mean_pending = 0;  // events queued after each pop, on average over the loop
  double peak_rss_mib = 0;
  double simulated_s = 0;
  double bare_loop_wall_s = 0;  // median, same event count, population mean_pending
  double bare_loop_events_per_s = 0;
  double ratio_to_bare_loop = 0;       // events_per_s / bare_loop_events_per_s
  double loop_ratio_to_bare_loop = 0;  // loop_events_per_s / bare_loop_events_per_s
};

// Runs `scenario` `repeats` times and the bare loop as many times with its event count and its
// loop's mean population of pending events.
Measurement measure(const Scenario& scenario, int repeats);

}  // namespace hetsim::bench

#include "tools/bench/bench_scenarios.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <string>

#include "base/data_directory.hpp"
#include "base/error.hpp"
#include "models/transformer_config.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/collectives/flow_collective.hpp"
#include "sim/engine.hpp"
#include "sim/event_queue.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::bench {

ScaledCluster::ScaledCluster(const std::string& data_dir, int nodes) {
  std::ifstream in(data_dir + "/topologies/clusters/dgx-h100-128node.json");
  nlohmann::json cluster = nlohmann::json::parse(in);
  cluster["name"] = fmt::format("dgx-h100-{}node", nodes);
  cluster["sites"][0]["node_groups"][0]["count"] = nodes;
  char name[] = "/tmp/hetsim-bench-XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) throw Error("bench: cannot create a temporary cluster file under /tmp");
  close(fd);
  path_ = name;
  std::ofstream out(path_);
  out << cluster.dump();
  if (!out.flush())
    throw Error(fmt::format("bench: cannot write the temporary cluster file {}", path_));
}

ScaledCluster::~ScaledCluster() { std::remove(path_.c_str()); }

RunOptions replay_plan(int tp, int pp, int gbs, int seq, int first_layers, int last_layers) {
  RunOptions o;
  o.plan.tp = tp;
  o.plan.pp = pp;
  o.plan.micro_batch_size = 1;
  o.plan.global_batch_size = gbs;
  o.plan.seq_length = seq;
  o.plan.sequence_parallel = true;
  o.plan.distributed_optimizer = true;
  o.first_stage_layers = first_layers;
  o.last_stage_layers = last_layers;
  return o;
}

RunOptions llama3_70b_plan(int gbs) {
  RunOptions o = replay_plan(8, 8, gbs, 8192, 0, 0);
  o.plan.flash_attention = true;
  return o;
}

RunOptions llama3_405b_16k_plan() {
  RunOptions o = replay_plan(8, 16, 2048, 8192, 7, 7);
  o.plan.flash_attention = true;
  return o;
}

ScenarioRun replay_once(const GpuCatalog& catalog, const std::string& cluster_file,
                        const std::string& model, const RunOptions& options) {
  const Cluster cluster = load_cluster(cluster_file, catalog.keys());
  const TransformerConfig config = load_transformer_config(data_directory() + "/" + model);
  const RunResult result = simulate_training(cluster, catalog, config, options);
  return ScenarioRun{result.events, result.iteration_time_s};
}

namespace {

// A ring all-reduce of 1 GiB over GPUs 0..gpus-1 of `cluster_file`, simulated as flows on one
// ring channel per NIC (collective_plan.hpp).
ScenarioRun flat_ring_once(const GpuCatalog& catalog, const std::string& cluster_file, int gpus) {
  const Cluster cluster = load_cluster(cluster_file, catalog.keys());
  std::vector<GpuId> group(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) group[static_cast<std::size_t>(g)] = g;
  const CollectivePlan plan = plan_collective(cluster, CollectiveOp::kAllReduce,
                                              CollectiveAlgo::kRing, group, 1024.0 * 1024 * 1024);
  const CollectiveTiming timing = simulate_collective_flows(cluster, plan);
  return ScenarioRun{timing.events, timing.time_s};
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double read_status_kib(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(key) + ":";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size()));
  return -1;
}

}  // namespace

std::vector<Scenario> standard_scenarios(const std::string& data_dir, const GpuCatalog& catalog) {
  const std::string small = data_dir + "/topologies/clusters/dgx-h100-128node.json";
  const std::string large = data_dir + "/topologies/clusters/dgx-h100-2048node.json";
  std::vector<Scenario> scenarios;
  // Llama-3-70B, TP8 x PP8 x DP16, 32 microbatches per replica, 1F1B.
  scenarios.push_back({"replay-1k",
                       "1,024 GPUs: Llama-3-70B TP8 x PP8 x DP16, gbs 512, seq 8192, SP, FlashAttention",
                       [&catalog, small] {
                         return replay_once(catalog, small, "models/configs/llama-3-70b.json",
                                            llama3_70b_plan(512));
                       }});
  // Llama-3-405B as the Llama 3 paper trains it on 16,384 GPUs (llama3_405b_16k_plan).
  scenarios.push_back({"replay-16k",
                       "16,384 GPUs: Llama-3-405B TP8 x PP16 x DP128, gbs 2048, seq 8192, SP, "
                       "FlashAttention",
                       [&catalog, large] {
                         return replay_once(catalog, large, "models/configs/llama-3-405b.json",
                                            llama3_405b_16k_plan());
                       }});
  // 16 nodes: 8 ring channels x 128 GPUs x 254 steps = 260,096 transfers.
  scenarios.push_back({"flat-ring-128",
                       "ring all-reduce of 1 GiB over 128 GPUs (16 DGX H100 nodes), as flows",
                       [&catalog, large] { return flat_ring_once(catalog, large, 128); }});
  return scenarios;
}

double bare_heap_loop(std::uint64_t events, std::size_t pending) {
  // The reference is a plain binary heap of the engine's events under the engine's order, not
  // EventQueue itself, so that a faster EventQueue shows as a higher ratio. A binary heap needs
  // each event's sequence number to break ties in insertion order.
  struct HeapEvent {
    Event event;
    std::uint64_t sequence = 0;
  };
  const auto later = [](const HeapEvent& a, const HeapEvent& b) {
    if (a.event.time != b.event.time) return a.event.time > b.event.time;
    return a.sequence > b.sequence;
  };
  std::priority_queue<HeapEvent, std::vector<HeapEvent>, decltype(later)> heap(later);
  std::mt19937_64 random(20261202);
  // Uniform in [0, 1) ms from the top 53 bits, written here so every standard library agrees.
  const auto delay = [&random] { return static_cast<double>(random() >> 11) * 0x1.0p-53 * 1e-3; };
  std::uint64_t sequence = 0;
  for (std::size_t i = 0; i <= pending; ++i)
    heap.push({Event{delay(), 0, 0, i}, sequence++});
  double last = 0;
  for (std::uint64_t i = 0; i < events; ++i) {
    const Event e = heap.top().event;
    heap.pop();
    last = e.time;
    heap.push({Event{e.time + delay(), e.handler, e.kind, e.payload}, sequence++});
  }
  return last;
}

bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // 5: reset the peak resident set size (proc(5))
  clear.flush();
  return static_cast<bool>(clear);
}

double peak_rss_mib() {
  const double hwm_kib = read_status_kib("VmHWM");
  if (hwm_kib >= 0) return hwm_kib / 1024.0;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

Measurement measure(const Scenario& scenario, int repeats) {
  Measurement m;
  m.name = scenario.name;
  m.description = scenario.description;
  reset_peak_rss();
  std::vector<double> walls;
  std::vector<double> loop_walls;
  ScenarioRun run;
  EventLoopStats loop;
  for (int i = 0; i < std::max(repeats, 1); ++i) {
    const EventLoopStats before = Engine::thread_loop_stats();
    const auto start = std::chrono::steady_clock::now();
    run = scenario.run();
    walls.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    const EventLoopStats& after = Engine::thread_loop_stats();
    loop = {after.wall_s - before.wall_s, after.events - before.events,
            after.pending_sum - before.pending_sum};
    loop_walls.push_back(loop.wall_s);
  }
  m.peak_rss_mib = peak_rss_mib();
  m.events = run.events;
  m.simulated_s = run.simulated_s;
  m.wall_s = median(walls);
  m.events_per_s = static_cast<double>(m.events) / m.wall_s;
  m.loop_wall_s = median(loop_walls);
  m.loop_events_per_s = static_cast<double>(m.events) / m.loop_wall_s;
  m.mean_pending = loop.events > 0 ? static_cast<double>(loop.pending_sum) /
                                         static_cast<double>(loop.events)
                                   : 0;
  const auto population = static_cast<std::size_t>(std::llround(m.mean_pending));
  std::vector<double> bare;
  double checksum = 0;
  for (int i = 0; i < std::max(repeats, 1); ++i) {
    const auto start = std::chrono::steady_clock::now();
    checksum += bare_heap_loop(m.events, population);
    bare.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (!(checksum >= 0)) throw Error("bench: the bare heap loop went back in time");
  m.bare_loop_wall_s = median(bare);
  m.bare_loop_events_per_s = static_cast<double>(m.events) / m.bare_loop_wall_s;
  m.ratio_to_bare_loop = m.events_per_s / m.bare_loop_events_per_s;
  m.loop_ratio_to_bare_loop = m.loop_events_per_s / m.bare_loop_events_per_s;
  return m;
}

}  // namespace hetsim::bench

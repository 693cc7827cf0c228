// Replay throughput on large clusters: events/s, wall time and peak resident memory of one
// simulated training iteration. Usage: bench_replay [REPEATS] (default 3); the median wall time
// of the repeats is reported, and peak RSS is the process's high-water mark after each case.
// The scaling cases (512 to 4,096 GPUs) reduce gradients as flow collectives in Megatron's
// buckets, overlapped with the backward (--overlap-grad-reduce, distributed optimizer).
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/data_directory.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"

namespace {

struct Case {
  std::string name;
  std::string cluster;
  std::string model;
  hetsim::RunOptions options;
};

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

hetsim::RunOptions plan(int tp, int pp, int gbs, int seq, int first_layers, int last_layers) {
  hetsim::RunOptions o;
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

// A copy of the shipped 128-node DGX H100 cluster with `nodes` nodes, written to a temporary
// file (the loader reads files); removed when the case ends.
struct ScaledCluster {
  std::string path;
  ScaledCluster(const std::string& data, int nodes) {
    std::ifstream in(data + "/topologies/clusters/dgx-h100-128node.json");
    nlohmann::json cluster = nlohmann::json::parse(in);
    cluster["name"] = fmt::format("dgx-h100-{}node", nodes);
    cluster["sites"][0]["node_groups"][0]["count"] = nodes;
    char name[] = "/tmp/hetsim-bench-XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) throw std::runtime_error("cannot create a temporary cluster file");
    close(fd);
    path = name;
    std::ofstream(path) << cluster.dump();
  }
  ~ScaledCluster() { std::remove(path.c_str()); }
};

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const std::string data = hetsim::data_directory();
  // 1,024 GPUs: Llama-3-70B, TP8 x PP8 x DP16, 32 microbatches per replica.
  // 16,384 GPUs: Llama-3-405B, TP8 x PP16 x DP128 as in the Llama 3 paper (126 layers: 7 on the
  // first and last stages, 8 on the others), global batch 2,048 sequences of 8,192 tokens.
  std::vector<Case> cases{
      {"1024-gpu llama-3-70b tp8 pp8 dp16", "topologies/clusters/dgx-h100-128node.json",
       "models/configs/llama-3-70b.json", plan(8, 8, 512, 8192, 0, 0)},
      {"16384-gpu llama-3-405b tp8 pp16 dp128", "topologies/clusters/dgx-h100-2048node.json",
       "models/configs/llama-3-405b.json", plan(8, 16, 2048, 8192, 7, 7)},
  };
  // Llama-3-70B, TP8 x PP8, 32 microbatches per replica, on 64 to 512 nodes, before the
  // 16,384-GPU case so that each case's peak RSS is its own high-water mark.
  // The same 1,024-GPU plan with ZeRO-3: a weight all-gather before every forward and backward.
  hetsim::RunOptions zero3 = plan(8, 8, 512, 8192, 0, 0);
  zero3.plan.zero_stage = 3;
  zero3.overlap_grad_reduce = true;
  cases.insert(cases.begin() + 1, {"1024-gpu llama-3-70b zero-3", "topologies/clusters/dgx-h100-128node.json",
                                   "models/configs/llama-3-70b.json", zero3});
  std::vector<std::unique_ptr<ScaledCluster>> scaled;
  for (int nodes : {64, 128, 256, 512}) {
    scaled.push_back(std::make_unique<ScaledCluster>(data, nodes));
    hetsim::RunOptions o = plan(8, 8, 32 * nodes / 8, 8192, 0, 0);
    o.overlap_grad_reduce = true;
    cases.insert(cases.end() - 1, {fmt::format("{}-gpu llama-3-70b bucketed flows", nodes * 8), scaled.back()->path,
                     "models/configs/llama-3-70b.json", o});
  }
  const hetsim::GpuCatalog catalog = hetsim::GpuCatalog::load(data + "/models/gpus");
  fmt::print("{:<40} {:>10} {:>10} {:>14} {:>12} {:>14}\n", "case", "events", "wall_s",
             "events_per_s", "peak_rss_mib", "iteration_s");
  for (const Case& c : cases) {
    std::vector<double> walls;
    hetsim::RunResult result;
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const std::string file = c.cluster.front() == '/' ? c.cluster : data + "/" + c.cluster;
      const hetsim::Cluster cluster = hetsim::load_cluster(file, catalog.keys());
      const hetsim::TransformerConfig model = hetsim::load_transformer_config(data + "/" + c.model);
      result = hetsim::simulate_training(cluster, catalog, model, c.options);
      walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(walls.begin(), walls.end());
    const double median = walls[walls.size() / 2];
    fmt::print("{:<40} {:>10} {:>10.3f} {:>14.0f} {:>12.1f} {:>14.4f}\n", c.name, result.events, median,
               static_cast<double>(result.events) / median, peak_rss_mib(), result.iteration_time_s);
  }
  return 0;
}

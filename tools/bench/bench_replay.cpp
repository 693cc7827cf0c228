// Replay throughput on large clusters: events/s, wall time and peak resident memory of one
// simulated training iteration. Usage: bench_replay [REPEATS] [scaling|standard] [NAME_PART]
// (default 3 repeats, the standard cases, all of them; NAME_PART keeps only the cases whose name
// contains it, so that a profiler sees one case). The median wall time of the repeats is
// reported, whole and of the event loop alone (loop_s; vs_bare and loop_vs are their rates
// against the bare loop), with the loop's mean of pending events (pending); peak RSS is each
// case's own high-water mark (bench_scenarios.hpp). With `scaling`, the same per-replica load on
// 1,024 to 65,536 GPUs instead (scaling_cases), each size's wall time also as a multiple of the
// previous size's. The standard cases of 512 to 4,096 GPUs reduce gradients as flow collectives
// in Megatron's buckets, overlapped with the backward (--overlap-grad-reduce, distributed
// optimizer).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/data_directory.hpp"
#include "tools/bench/bench_scenarios.hpp"

namespace {

using hetsim::bench::llama3_70b_plan;
using hetsim::bench::ScaledCluster;

struct Case {
  std::string name;
  std::string cluster;
  std::string model;
  hetsim::RunOptions options;
};

// The standard cases: the two shipped clusters, ZeRO-3, and bucketed flow reduction on 512 to
// 4,096 GPUs.
std::vector<Case> standard_cases(const std::string& data,
                                 std::vector<std::unique_ptr<ScaledCluster>>& scaled) {
  // 1,024 GPUs: Llama-3-70B, TP8 x PP8 x DP16, 32 microbatches per replica (llama3_70b_plan).
  // 16,384 GPUs: Llama-3-405B, TP8 x PP16 x DP128 as in the Llama 3 paper (llama3_405b_16k_plan).
  std::vector<Case> cases{
      {"1024-gpu llama-3-70b tp8 pp8 dp16 flash", "topologies/clusters/dgx-h100-128node.json",
       "models/configs/llama-3-70b.json", llama3_70b_plan(512)},
      {"16384-gpu llama-3-405b tp8 pp16 dp128 flash", "topologies/clusters/dgx-h100-2048node.json",
       "models/configs/llama-3-405b.json", hetsim::bench::llama3_405b_16k_plan()},
  };
  // Llama-3-70B, TP8 x PP8, 32 microbatches per replica, on 64 to 512 nodes, before the
  // 16,384-GPU case so that each case's peak RSS is its own high-water mark.
  // The same 1,024-GPU plan with ZeRO-3: a weight all-gather before every forward and backward.
  hetsim::RunOptions zero3 = llama3_70b_plan(512);
  zero3.plan.zero_stage = 3;
  zero3.overlap_grad_reduce = true;
  cases.insert(cases.begin() + 1,
               {"1024-gpu llama-3-70b zero-3", "topologies/clusters/dgx-h100-128node.json",
                "models/configs/llama-3-70b.json", zero3});
  for (int nodes : {64, 128, 256, 512}) {
    scaled.push_back(std::make_unique<ScaledCluster>(data, nodes));
    hetsim::RunOptions o = llama3_70b_plan(32 * nodes / 8);
    o.overlap_grad_reduce = true;
    cases.insert(cases.end() - 1, {fmt::format("{}-gpu llama-3-70b bucketed flows", nodes * 8),
                                   scaled.back()->path(), "models/configs/llama-3-70b.json", o});
  }
  return cases;
}

// Weak scaling: Llama-3-70B, TP8 x PP8 with 32 microbatches per replica and bucketed flow
// reduction as in the standard cases, on 128 to 8,192 nodes (1,024 to 65,536 GPUs), data
// parallelism growing with the nodes, so each doubling doubles the work.
std::vector<Case> scaling_cases(const std::string& data,
                                std::vector<std::unique_ptr<ScaledCluster>>& scaled) {
  std::vector<Case> cases;
  for (int nodes = 128; nodes <= 8192; nodes *= 2) {
    scaled.push_back(std::make_unique<ScaledCluster>(data, nodes));
    hetsim::RunOptions o = llama3_70b_plan(32 * nodes / 8);
    o.overlap_grad_reduce = true;
    cases.push_back({fmt::format("{}-gpu llama-3-70b dp{}", nodes * 8, nodes / 8),
                     scaled.back()->path(), "models/configs/llama-3-70b.json", o});
  }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const std::string data = hetsim::data_directory();
  const bool scaling = argc > 2 && std::string(argv[2]) == "scaling";
  std::vector<std::unique_ptr<ScaledCluster>> scaled;
  std::vector<Case> cases = scaling ? scaling_cases(data, scaled) : standard_cases(data, scaled);
  if (argc > 3) {
    const std::string part = argv[3];
    std::erase_if(cases, [&](const Case& c) { return c.name.find(part) == std::string::npos; });
  }
  const hetsim::GpuCatalog catalog = hetsim::GpuCatalog::load(data + "/models/gpus");
  fmt::print("{:<40} {:>10} {:>10} {:>14} {:>12} {:>14} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
             "case", "events", "wall_s", "events_per_s", "peak_rss_mib", "iteration_s", "vs_bare",
             "loop_s", "loop_vs", "pending", "wall_x");
  double previous_wall_s = 0;
  for (const Case& c : cases) {
    const std::string file = c.cluster.front() == '/' ? c.cluster : data + "/" + c.cluster;
    const hetsim::bench::Scenario scenario{
        c.name, c.name,
        [&] { return hetsim::bench::replay_once(catalog, file, c.model, c.options); }};
    const hetsim::bench::Measurement m = hetsim::bench::measure(scenario, repeats);
    // With `scaling`, wall time over the previous case's: the multiple per doubling of the GPUs.
    const std::string wall_x =
        scaling && previous_wall_s > 0 ? fmt::format("{:.2f}", m.wall_s / previous_wall_s) : "-";
    previous_wall_s = m.wall_s;
    fmt::print(
        "{:<40} {:>10} {:>10.3f} {:>14.0f} {:>12.1f} {:>14.4f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.0f} {:>10}\n",
        c.name, m.events, m.wall_s, m.events_per_s, m.peak_rss_mib, m.simulated_s,
        m.ratio_to_bare_loop, m.loop_wall_s, m.loop_ratio_to_bare_loop, m.mean_pending, wall_x);
    std::fflush(stdout);
  }
  return 0;
}

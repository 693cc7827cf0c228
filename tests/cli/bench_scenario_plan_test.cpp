// The replay scenarios' plans are the Llama 3 models as Meta trained them, and they fit in the
// H100s' memory: replay-16k (Llama-3-405B on 16,384 GPUs, Table 4) and replay-1k (Llama-3-70B on
// 1,024) run out of memory on no GPU with FlashAttention; without it (the scenarios before) the
// first stages do, and both replay the same events.
#include <doctest/doctest.h>

#include "base/data_directory.hpp"
#include "models/transformer_config.hpp"
#include "tools/bench/bench_scenarios.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {

const GpuCatalog& catalog() {
  static const GpuCatalog loaded = GpuCatalog::load(data_directory() + "/models/gpus");
  return loaded;
}

// The plan as given and without FlashAttention, on a shipped cluster and model.
struct WithAndWithout {
  RunResult fused, unfused;
};
WithAndWithout run_both(const std::string& cluster_name, const std::string& model_name, const RunOptions& plan) {
  const Cluster cluster =
      load_cluster(data_directory() + "/topologies/clusters/" + cluster_name + ".json", catalog().keys());
  const TransformerConfig model =
      load_transformer_config(data_directory() + "/models/configs/" + model_name + ".json");
  RunOptions unfused = plan;
  unfused.plan.flash_attention = false;
  return {simulate_training(cluster, catalog(), model, plan), simulate_training(cluster, catalog(), model, unfused)};
}

}  // namespace

TEST_CASE("the replay-16k plan fits in memory as Meta ran it, with the events it had") {
  const RunOptions plan = bench::llama3_405b_16k_plan();
  CHECK(plan.plan.tp == 8);
  CHECK(plan.plan.pp == 16);
  CHECK(plan.plan.cp == 1);
  CHECK(plan.plan.seq_length == 8192);
  CHECK(plan.plan.global_batch_size == 2048);  // 16 sequences per data-parallel rank of 128
  const WithAndWithout runs = run_both("dgx-h100-2048node", "llama-3-405b", plan);
  CHECK(runs.fused.plan.dp == 128);
  CHECK(runs.fused.oom.empty());
  CHECK(runs.fused.peak_memory_bytes <= catalog().at("h100-sxm").hbm_bytes);
  CHECK(runs.unfused.oom.size() == 13 * 1024);
  CHECK(runs.fused.events == runs.unfused.events);
}

TEST_CASE("the replay-1k plan fits in memory with FlashAttention, with the events it had") {
  const WithAndWithout runs = run_both("dgx-h100-128node", "llama-3-70b", bench::llama3_70b_plan(512));
  CHECK(runs.fused.plan.dp == 16);
  CHECK(runs.fused.oom.empty());
  CHECK_FALSE(runs.unfused.oom.empty());
  CHECK(runs.fused.events == runs.unfused.events);
}

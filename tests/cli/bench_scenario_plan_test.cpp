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

TEST_CASE("the replay-16k plan fits in memory as Meta ran it, with the events it had") {
  const GpuCatalog catalog = GpuCatalog::load(data_directory() + "/models/gpus");
  const Cluster cluster = load_cluster(
      data_directory() + "/topologies/clusters/dgx-h100-2048node.json", catalog.keys());
  const TransformerConfig model =
      load_transformer_config(data_directory() + "/models/configs/llama-3-405b.json");
  const RunOptions plan = bench::llama3_405b_16k_plan();
  CHECK(plan.plan.tp == 8);
  CHECK(plan.plan.pp == 16);
  CHECK(plan.plan.cp == 1);
  CHECK(plan.plan.seq_length == 8192);
  CHECK(plan.plan.global_batch_size == 2048);  // 16 sequences per data-parallel rank of 128
  const RunResult fits = simulate_training(cluster, catalog, model, plan);
  CHECK(fits.plan.dp == 128);
  CHECK(fits.oom.empty());
  CHECK(fits.peak_memory_bytes <= catalog.at("h100-sxm").hbm_bytes);

  RunOptions unfused = plan;
  unfused.plan.flash_attention = false;
  const RunResult before = simulate_training(cluster, catalog, model, unfused);
  CHECK(before.oom.size() == 13 * 1024);
  CHECK(fits.events == before.events);
}

TEST_CASE("the replay-1k plan fits in memory with FlashAttention, with the events it had") {
  const GpuCatalog catalog = GpuCatalog::load(data_directory() + "/models/gpus");
  const Cluster cluster = load_cluster(
      data_directory() + "/topologies/clusters/dgx-h100-128node.json", catalog.keys());
  const TransformerConfig model =
      load_transformer_config(data_directory() + "/models/configs/llama-3-70b.json");
  const RunOptions plan = bench::llama3_70b_plan(512);
  const RunResult fits = simulate_training(cluster, catalog, model, plan);
  CHECK(fits.plan.dp == 16);
  CHECK(fits.oom.empty());
  RunOptions unfused = plan;
  unfused.plan.flash_attention = false;
  const RunResult before = simulate_training(cluster, catalog, model, unfused);
  CHECK_FALSE(before.oom.empty());
  CHECK(fits.events == before.events);
}

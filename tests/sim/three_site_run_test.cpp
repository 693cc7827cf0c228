// The three-site what-if (topologies/clusters/three-site.json): with tp 8 x pp 3 x dp 2 in
// Megatron order each pipeline rank fills one site, so tensor- and data-parallel traffic stays
// inside sites and only the pipeline's activations and gradients cross the WAN.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {
const std::string root = HETSIM_SOURCE_DIR;
const GpuCatalog catalog = GpuCatalog::load(root + "/models/gpus");
const Cluster cluster = load_cluster(root + "/topologies/clusters/three-site.json", catalog.keys());
const TransformerConfig model = load_transformer_config(root + "/models/configs/llama-3-8b.json");

// Llama-3-8B, tp 8 x pp 3 (dp 2), 16 microbatches of 4,096 tokens per replica.
RunOptions three_site_plan() {
  RunOptions o;
  o.plan.tp = 8;
  o.plan.pp = 3;
  o.plan.global_batch_size = 32;
  o.plan.seq_length = 4096;
  o.plan.flash_attention = true;
  o.plan.sequence_parallel = true;
  return o;
}
}  // namespace

TEST_CASE("three-site, tp 8 x pp 3 x dp 2: only pipeline traffic crosses the WAN, and it pays egress") {
  RunOptions o = three_site_plan();
  o.balance_layers = true;

  // Placement: rank r's replicas are nodes 2r and 2r+1, both in site r; a TP group is one node.
  ParallelPlan plan = o.plan;
  const Placement placement = place_plan(cluster, model, plan);
  REQUIRE(plan.dp == 2);
  for (int w = 0; w < placement.workers(); ++w) {
    CAPTURE(w);
    const auto gpus = placement.worker_gpus(w);
    for (int g : gpus) {
      CHECK(cluster.gpu(g).site == placement.rank_of(w));
      CHECK(cluster.gpu(g).node == cluster.gpu(gpus.front()).node);
    }
  }

  const RunResult r = simulate_training(cluster, catalog, model, o);
  // WAN bytes, closed form: with sequence parallelism each of the 8 TP GPUs sends its 1/8 shard
  // of the b*s*h bf16 activation (1 x 4096 x 4096 x 2 B / 8 = 4 MiB) forward and its gradient
  // back, for 16 microbatches, over 2 stage boundaries (each between two sites), for 2
  // replicas: 4 MiB x 8 x 2 x 16 x 2 x 2 = 4 GiB. Gradient all-reduces stay inside sites (none).
  const double expected_wan = 4.0 * 1024 * 1024 * 8 * 2 * 16 * 2 * 2;
  std::printf("three-site llama-3-8b tp 8 x pp 3 x dp 2, balanced %d,%d,%d layers: iteration %.3f s, "
              "WAN expected %.0f B, actual %.0f B, egress USD %.4f\n",
              r.layers_per_stage[0], r.layers_per_stage[1], r.layers_per_stage[2], r.iteration_time_s,
              expected_wan, r.bytes_wan, r.egress_usd);
  CHECK(r.bytes_wan == expected_wan);
  // USD 0.02 per GB (1e9 B) on every WAN link of the file.
  CHECK(r.egress_usd == doctest::Approx(expected_wan * 0.02e-9).epsilon(1e-12));
  // The RTX 4090 site (PCIe tensor parallelism, 24 GB) gets the fewest layers.
  CHECK(r.layers_per_stage[2] < r.layers_per_stage[0]);
  CHECK(r.layers_per_stage[2] < r.layers_per_stage[1]);
  CHECK(r.oom.empty());
}

TEST_CASE("three-site with --placement site-aware: the file order is best; WAN bytes reported per link") {
  RunOptions o = three_site_plan();
  o.layers_per_stage = {15, 16, 1};
  const RunResult megatron = simulate_training(cluster, catalog, model, o);
  o.site_placement = true;
  const RunResult aware = simulate_training(cluster, catalog, model, o);
  CHECK(aware.site_order == std::vector<std::string>{"dc-a", "dc-b", "dc-c"});
  CHECK(aware.iteration_time_s == megatron.iteration_time_s);
  // Two boundaries, each crossed both ways: dc-a->dc-b, dc-b->dc-a, dc-b->dc-c, dc-c->dc-b carry
  // 1 GiB each (half of each boundary's 2 GiB goes each way).
  REQUIRE(aware.wan_links.size() == 4);
  double total = 0;
  for (const WanLinkTraffic& link : aware.wan_links) {
    CAPTURE(link.link);
    CHECK(link.bytes == 1024.0 * 1024 * 1024);
    CHECK(link.egress_usd == doctest::Approx(link.bytes * 0.02e-9).epsilon(1e-12));
    total += link.bytes;
  }
  CHECK(total == aware.bytes_wan);
}

// A whole iteration on shipped clusters and models: plan checks with their messages, the
// relations every run must satisfy, and heterogeneous/WAN accounting.
#include <doctest/doctest.h>

#include <string>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {
const std::string kRoot = HETSIM_SOURCE_DIR;

struct Setup {
  GpuCatalog catalog = GpuCatalog::load(kRoot + "/models/gpus");
  Cluster cluster;
  TransformerConfig model;
  Setup(const std::string& cluster_file, const std::string& model_file)
      : cluster(load_cluster(kRoot + "/topologies/clusters/" + cluster_file, catalog.keys())),
        model(load_transformer_config(kRoot + "/models/configs/" + model_file)) {}
};

RunOptions options(int tp, int pp, int mbs, int gbs, int seq) {
  RunOptions o;
  o.plan.tp = tp;
  o.plan.pp = pp;
  o.plan.micro_batch_size = mbs;
  o.plan.global_batch_size = gbs;
  o.plan.seq_length = seq;
  return o;
}

std::string plan_error(Setup& s, const RunOptions& o) {
  try {
    simulate_training(s.cluster, s.catalog, s.model, o);
  } catch (const PlanError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("plans that do not fit the cluster or model are rejected with the numbers") {
  Setup s("dgx-h100-4node.json", "llama-3-8b.json");
  CHECK(plan_error(s, options(8, 3, 1, 64, 4096)) ==
        "tp 8 x pp 3 = 24 does not divide the cluster's 32 GPUs, so tp*pp*dp cannot equal the GPU count");
  CHECK(plan_error(s, options(4, 2, 1, 30, 4096)) ==
        "global batch 30 is not divisible by micro-batch 1 x data-parallel 4 = 4");
  CHECK(plan_error(s, options(4, 8, 1, 64, 4096)) == "(no error)");  // 32 layers on 8 stages
  Setup three_sites("three-site.json", "llama-3-8b.json");  // 48 GPUs
  CHECK(plan_error(three_sites, options(3, 1, 1, 64, 4096)) ==
        "tp 3 does not divide the model's 32 attention heads");
  CHECK(plan_error(s, options(1, 32, 1, 64, 4096)) == "(no error)");
  RunOptions uneven = options(2, 8, 1, 64, 4096);
  uneven.plan.vpp = 3;
  uneven.schedule = "interleaved";
  CHECK(plan_error(s, uneven) ==
        "32 layers are not divisible by 24 virtual pipeline stages (pp 8 x vpp 3); choose pp*vpp "
        "dividing 32 or set --decoder-first-pipeline-num-layers/--decoder-last-pipeline-num-layers");
  // More chunks than layers is refused before any timetable is built.
  uneven.plan.pp = 16;
  CHECK(plan_error(s, uneven) ==
        "pp 16 x vpp 3 = 48 model chunks exceed the model's 32 layers (each chunk holds at least one)");
  CHECK(plan_error(s, options(3, 1, 1, 64, 4096)).find("does not divide the cluster's 32 GPUs") !=
        std::string::npos);
}

TEST_CASE("every run satisfies the report's identities") {
  Setup s("dgx-h100-4node.json", "llama-3-8b.json");
  const RunResult r = simulate_training(s.cluster, s.catalog, s.model, options(4, 2, 1, 64, 4096));
  CHECK(r.plan.dp == 4);
  CHECK(r.plan.microbatches() == 16);
  CHECK(r.iteration_time_s > r.pipeline_time_s);
  CHECK(r.tokens_per_s == doctest::Approx(64.0 * 4096 / r.iteration_time_s).epsilon(1e-12));
  CHECK(r.mfu > 0.05);
  CHECK(r.mfu < 1.0);
  CHECK(r.memory.size() == 32);
  CHECK(r.oom.empty());
  // 1F1B on 2 stages with 16 microbatches: the bubble is at least (p-1)/(m+p-1) = 1/17.
  CHECK(r.bubble_fraction >= 1.0 / 17 - 1e-12);
  CHECK(r.bubble_fraction_per_rank.size() == 2);
  // Cost of the GPU time: 32 H100 at their list price for the iteration.
  const double per_hour = s.catalog.at("h100-sxm").usd_per_hour;
  CHECK(r.gpu_usd == doctest::Approx(32 * per_hour * r.iteration_time_s / 3600).epsilon(1e-12));
  CHECK(r.egress_usd == 0);
  CHECK(r.energy_kwh > 0);
  // Each of the 16 microbatches crosses the stage boundary twice (activation forward, gradient
  // backward) on each of the 4 replicas.
  CHECK(r.transfers == 2u * 16u * 4u);
}

TEST_CASE("the same inputs give the same results") {
  Setup s("two-site-wan.json", "llama-3-8b.json");
  const RunResult a = simulate_training(s.cluster, s.catalog, s.model, options(8, 2, 1, 32, 4096));
  const RunResult b = simulate_training(s.cluster, s.catalog, s.model, options(8, 2, 1, 32, 4096));
  CHECK(a.iteration_time_s == b.iteration_time_s);
  CHECK(a.events == b.events);
  CHECK(a.bytes_wan == b.bytes_wan);
}

TEST_CASE("a pipeline split across two sites sends activations over the WAN and pays egress") {
  // two-site-wan: 16 GPUs per site. tp 8 x pp 2 x dp 2 puts pipeline rank 0 on site A and rank 1
  // on site B (Megatron order: pipeline outermost), so every activation and gradient crosses.
  Setup s("two-site-wan.json", "llama-3-8b.json");
  const RunResult r = simulate_training(s.cluster, s.catalog, s.model, options(8, 2, 1, 32, 4096));
  CHECK(r.bytes_wan > 0);
  CHECK(r.egress_usd > 0);
  // Activations: b*s*h*2 bytes per microbatch per TP GPU, 8 GPUs, 16 microbatches per replica,
  // two directions (activations and gradients), 2 replicas.
  const double expected = 1.0 * 4096 * s.model.hidden_size * 2 * 8 * 16 * 2 * 2;
  CHECK(r.bytes_wan == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("a model that does not fit is reported as out of memory, per GPU") {
  Setup s("dgx-h100-4node.json", "llama-3-70b.json");
  const RunResult r = simulate_training(s.cluster, s.catalog, s.model, options(1, 4, 1, 64, 4096));
  CHECK(r.oom.size() == 32);
  CHECK(r.oom.front().peak_bytes() > r.oom.front().capacity_bytes);
}

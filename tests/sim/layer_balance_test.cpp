// Layer splits in a training run: --layers-per-stage as given (and its errors), and
// --balance-layers, the heterogeneous partitioner costed on each stage's own GPU type, which on
// mixed-a100-h100 moves layers onto the H100 stages and shortens the iteration.
#include <doctest/doctest.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
using test::shipped_catalog;
const Cluster& mixed() { return test::shipped_cluster("mixed-a100-h100"); }
const TransformerConfig& llama8b() { return test::shipped_model("llama-3-8b"); }

// tp 8 x pp 4 x dp 1 on the 32 GPUs: one pipeline rank per node.
RunOptions pp4() {
  RunOptions o;
  o.plan.tp = 8;
  o.plan.pp = 4;
  o.plan.micro_batch_size = 1;
  o.plan.global_batch_size = 16;
  o.plan.seq_length = 4096;
  return o;
}

std::string plan_error(const Cluster& cluster, const TransformerConfig& model, const RunOptions& o) {
  try {
    simulate_training(cluster, shipped_catalog(), model, o);
  } catch (const PlanError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("mixed-a100-h100 with tp 8 x pp 4: stages on A100, A100, H100, H100 (Megatron order)") {
  // Megatron's rank order puts pipeline outermost: rank r's tensor-parallel group is GPUs
  // 8r..8r+7, i.e. node r, and the file lists the two A100 nodes first.
  ParallelPlan plan = pp4().plan;
  const Placement placement = place_plan(mixed(), llama8b(), plan);
  CHECK(plan.dp == 1);
  const char* expected[] = {"a100-80gb", "a100-80gb", "h100-sxm", "h100-sxm"};
  for (int rank = 0; rank < 4; ++rank) {
    CAPTURE(rank);
    for (int gpu : placement.worker_gpus(rank)) {
      CHECK(gpu / 8 == rank);
      CHECK(mixed().gpu(gpu).gpu_type == expected[rank]);
    }
  }
}

TEST_CASE("--balance-layers puts more layers on the H100 stages and shortens the iteration") {
  const RunResult uniform = simulate_training(mixed(), shipped_catalog(), llama8b(), pp4());
  RunOptions o = pp4();
  o.balance_layers = true;
  const RunResult balanced = simulate_training(mixed(), shipped_catalog(), llama8b(), o);
  const auto& l = balanced.layers_per_stage;
  std::printf("llama-3-8b on mixed-a100-h100, tp 8 x pp 4, 16 microbatches, 1f1b:\n"
              "  uniform  %d,%d,%d,%d layers: iteration %.4f s\n"
              "  balanced %d,%d,%d,%d layers: iteration %.4f s\n",
              uniform.layers_per_stage[0], uniform.layers_per_stage[1], uniform.layers_per_stage[2],
              uniform.layers_per_stage[3], uniform.iteration_time_s, l[0], l[1], l[2], l[3],
              balanced.iteration_time_s);
  CHECK(uniform.layers_per_stage == std::vector<int>{8, 8, 8, 8});
  REQUIRE(l.size() == 4);
  CHECK(std::accumulate(l.begin(), l.end(), 0) == 32);
  CHECK(l[2] + l[3] > l[0] + l[1]);
  CHECK(l[2] > l[0]);
  CHECK(l[2] > l[1]);
  CHECK(balanced.iteration_time_s < uniform.iteration_time_s);
  CHECK(balanced.oom.empty());

  // The same split given explicitly replays identically.
  RunOptions given = pp4();
  given.layers_per_stage = l;
  const RunResult again = simulate_training(mixed(), shipped_catalog(), llama8b(), given);
  CHECK(again.layers_per_stage == l);
  CHECK(again.iteration_time_s == balanced.iteration_time_s);
}

TEST_CASE("--layers-per-stage: one entry >= 1 per slice, adding up to the model's layers") {
  RunOptions o = pp4();
  o.layers_per_stage = {6, 10, 10, 6};
  CHECK(simulate_training(mixed(), shipped_catalog(), llama8b(), o).layers_per_stage ==
        std::vector<int>{6, 10, 10, 6});
  o.layers_per_stage = {10, 12, 10};
  CHECK(plan_error(mixed(), llama8b(), o) ==
        "--layers-per-stage has 3 entries (10,12,10); expected one per model slice: 4 (pp 4 x vpp 1)");
  o.layers_per_stage = {10, 12, 10, 2};
  CHECK(plan_error(mixed(), llama8b(), o) ==
        "--layers-per-stage 10,12,10,2 adds up to 34 layers; the model has 32");
  o.layers_per_stage = {16, 16, 0, 0};
  CHECK(plan_error(mixed(), llama8b(), o) ==
        "--layers-per-stage entry 3 (stage 2) is 0; expected at least 1 layer");
  o.layers_per_stage = {8, 8, 8, 8};
  o.balance_layers = true;
  CHECK(plan_error(mixed(), llama8b(), o) ==
        "--layers-per-stage, --balance-layers and --decoder-first/last-pipeline-num-layers each "
        "choose the layer split; give only one of them");
  // With interleaving, one entry per virtual stage (pp x vpp).
  RunOptions v = pp4();
  v.schedule = "interleaved";
  v.plan.vpp = 2;
  v.layers_per_stage = {3, 4, 4, 5, 3, 4, 4, 5};
  CHECK(simulate_training(mixed(), shipped_catalog(), llama8b(), v).layers_per_stage == v.layers_per_stage);
}

TEST_CASE("--balance-layers: timetables with paths or several chunks per rank are not supported") {
  RunOptions o = pp4();
  o.balance_layers = true;
  o.schedule = "dualpipe";
  o.plan.vpp = 2;
  CHECK(plan_error(mixed(), llama8b(), o) ==
        "--balance-layers is not supported for the dualpipe timetable: its microbatches follow 2 "
        "paths (mirrored halves of the model on each rank) and the partitioner balances one chain "
        "of stages; give the split with --layers-per-stage");
  o.schedule = "interleaved";
  CHECK(plan_error(mixed(), llama8b(), o) ==
        "--balance-layers is not supported for the interleaved timetable with 2 chunks per rank: "
        "the partitioner balances one model chunk per rank; give the 8 slices with "
        "--layers-per-stage");
}

TEST_CASE("--balance-layers names the stage whose memory cannot hold the split") {
  const TransformerConfig big = test::shipped_model("llama-3-405b");
  RunOptions o = pp4();
  o.balance_layers = true;
  // Llama-3-405B, tp 8: about 6.7 GiB of static memory per layer and GPU, plus 1.2 GiB of
  // activations per layer and microbatch, 4 microbatches in flight on rank 0 down to 1 on rank 3.
  CHECK(plan_error(mixed(), big, o) ==
        "the stages' memory holds at most 30 of the 126 layers: stage 0 (a100-80gb) holds 6 (4.40 "
        "GiB + 11.42 GiB per layer in 80.00 GiB); stage 1 (a100-80gb) holds 7 (0.00 GiB + 10.24 GiB "
        "per layer in 80.00 GiB); stage 2 (h100-sxm) holds 8 (0.00 GiB + 9.05 GiB per layer in 79.65 "
        "GiB); stage 3 (h100-sxm) holds 9 (4.90 GiB + 7.87 GiB per layer in 79.65 GiB)");
}

TEST_CASE("--balance-layers weighs a stage by the measured profile its ops will be costed from") {
  // tp 8 x pp 2 on two A100 nodes, the first with the shipped A100 profile: its memory-bound ops
  // and tensor-parallel all-reduces are measured, and Llama-3-8B's layers run about 4% slower on
  // it than on the roofline. Weighed on the roofline alone, the split puts 17 layers on stage 0
  // (the LM head makes stage 1 the heavier per layer); weighed as the replay costs it, stage 0
  // takes fewer, and the iteration is shorter than with the roofline's split.
  test::TestNodeGroup profiled;
  profiled.gpu = "a100-80gb";
  profiled.profile = "models/profiles/a100-80gb.json";
  test::TestNodeGroup plain = profiled;
  plain.profile.clear();
  const Cluster cluster = test::one_site_cluster("a100_profiled_then_plain", {profiled, plain});
  RunOptions o = pp4();
  o.plan.pp = 2;
  o.balance_layers = true;
  const RunResult balanced = simulate_training(cluster, shipped_catalog(), llama8b(), o);
  const RunResult roofline_split =
      simulate_training(test::one_group_cluster("a100_plain", "a100-80gb", 2, 8, 370, 400),
                        shipped_catalog(), llama8b(), o);
  REQUIRE(balanced.layers_per_stage.size() == 2);
  REQUIRE(roofline_split.layers_per_stage.size() == 2);
  CHECK(balanced.layers_per_stage[0] < roofline_split.layers_per_stage[0]);

  RunOptions given = pp4();
  given.plan.pp = 2;
  given.layers_per_stage = roofline_split.layers_per_stage;
  const RunResult unbalanced = simulate_training(cluster, shipped_catalog(), llama8b(), given);
  CHECK(balanced.iteration_time_s < unbalanced.iteration_time_s);
}

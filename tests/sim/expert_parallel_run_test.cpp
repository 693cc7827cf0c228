// Mixtral-8x7B with expert parallelism on a shipped cluster: experts spread over ep replicas cut
// each GPU's static memory and the expert-data-parallel gradient traffic, all-to-alls show up in
// the step time; expert gradients reduce on a stream of their own, beside the dense ones; plans
// the replay cannot honour are refused with the reason.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/error.hpp"
#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
RunResult run(int ep, int zero_stage = 1, ReplayObserver* observer = nullptr) {
  RunOptions o;
  o.plan.tp = 2;
  o.plan.pp = 2;
  o.plan.ep = ep;
  o.plan.zero_stage = zero_stage;
  o.plan.global_batch_size = 64;
  o.plan.seq_length = 4096;
  o.plan.sequence_parallel = true;
  o.plan.flash_attention = true;
  return simulate_training(test::shipped_cluster("dgx-h100-4node"), test::shipped_catalog(), test::shipped_model("mixtral-8x7b"), o, observer);
}
}  // namespace

TEST_CASE("expert parallelism shards the experts, trades gradient traffic for all-to-alls") {
  const RunResult one = run(1);
  const RunResult eight = run(8);
  // 8 experts over ep 8: one expert per GPU instead of eight.
  CHECK(eight.memory.front().static_bytes < 0.4 * one.memory.front().static_bytes);
  // ep 8 = dp 8: every replica holds different experts, so only dense weights are reduced.
  CHECK(eight.gradient_reduce_s_per_rank[0] < 0.2 * one.gradient_reduce_s_per_rank[0]);
  // The all-to-alls cross NVLink and the NICs: the pipeline's compute takes longer.
  CHECK(eight.pipeline_time_s > one.pipeline_time_s);
}

TEST_CASE("expert parallelism that does not divide data parallelism is refused") {
  CHECK_THROWS_AS(run(3), PlanError);
}

TEST_CASE("ZeRO-3 with expert parallelism: weights sharded further, every rank gathers before its ops") {
  // Stage 2 reduce-scatters as stage 3 does; stage 3 adds the weight gathers on the same links.
  const RunResult stage2 = run(8, 2);
  const RunResult stage3 = run(8, 3);
  CHECK(stage3.parameter_gather_s_per_rank.size() == stage2.gradient_reduce_s_per_rank.size());
  for (double g : stage3.parameter_gather_s_per_rank) CHECK(g > 0);
  CHECK(stage3.memory.front().static_bytes < stage2.memory.front().static_bytes);
  // The gathers hold compute back; the iteration as a whole may still end sooner, since stage 2
  // gathers the updated parameters after the optimizer step, exposed.
  CHECK(stage3.pipeline_time_s > stage2.pipeline_time_s);
  CHECK(stage3.bytes_nic > stage2.bytes_nic);
}

TEST_CASE("expert gradients reduce over their own group on their own stream, alongside the dense ones") {
  struct Reductions : ReplayObserver {
    std::vector<PhaseRecord> dense, experts;
    void on_phase(const PhaseRecord& r) override {
      if (r.worker != 0 || r.kind == PhaseKind::kOptimizer) return;
      (r.expert_group ? experts : dense).push_back(r);
    }
  } worker_0;
  // dp 8, ep 2: expert weights are replicated over dp / ep = 4 replicas.
  run(2, 1, &worker_0);
  REQUIRE(!worker_0.dense.empty());
  REQUIRE(!worker_0.experts.empty());
  // Each stream runs one collective at a time ...
  for (const auto* stream : {&worker_0.dense, &worker_0.experts})
    for (std::size_t i = 1; i < stream->size(); ++i) CHECK((*stream)[i].start_s >= (*stream)[i - 1].end_s);
  // ... and the two streams run at the same time: the expert reduction starts before the dense
  // one ends.
  CHECK(worker_0.experts.front().start_s < worker_0.dense.front().end_s);
  CHECK(worker_0.dense.front().start_s < worker_0.experts.front().end_s);
}

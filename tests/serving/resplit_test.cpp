// Re-splitting a pipeline at run time: on two A100 stages of one DGX, moving 4 of Llama-3-8B's
// layers from stage 0 to stage 1 pauses the replica for the iteration in flight and then for
// the route's latency plus the layers' weights and KV-cache blocks over its bandwidth; after it
// the request runs as before (the total of the stages' layers is unchanged), only later by the
// transfer.
// Pairs of a re-split that cross one link share it.
#include <doctest/doctest.h>

#include <iostream>

#include "base/error.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_run.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;

TEST_CASE("a re-split's pause is the drain plus the closed-form transfer of the moved layers") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  ServingOptions o;
  o.replicas = 1;
  o.pp = 2;
  const std::vector<Request> one{{0.0, 300, 100}};
  const ServingResult before = simulate_serving(cluster, catalog(), model, one, o);
  const RequestOutcome& plain = before.requests[0];
  o.resplit_at_s = (plain.first_token_s + plain.finish_s) / 2;
  o.resplit_layers = {12, 20};
  const ServingResult after = simulate_serving(cluster, catalog(), model, one, o);
  REQUIRE(after.reconfigurations.size() == 1);
  const Reconfiguration& rc = after.reconfigurations[0];
  CHECK(rc.from_layers == std::vector<int>{16, 16});
  CHECK(rc.to_layers == std::vector<int>{12, 20});
  CHECK(rc.layers_moved == 4);
  CHECK(after.replicas[0].stage_layers == std::vector<int>{12, 20});
  // Mid-decode: one iteration in flight to drain, the sequence's blocks held.
  CHECK(rc.requested_s == o.resplit_at_s);
  CHECK(rc.drained_s > rc.requested_s);
  CHECK(rc.kv_blocks > blocks_for(300, 16));
  // bf16: 2 bytes per weight and per K or V element; Llama-3-8B has 8 KV heads of 128.
  const double weights = 4 * model.layer_params() * 2;
  const double kv = 4.0 * static_cast<double>(rc.kv_blocks) * 16 * (2 * 8 * 128 * 2);
  CHECK(rc.weights_bytes == doctest::Approx(weights).epsilon(1e-12));
  CHECK(rc.kv_bytes == doctest::Approx(kv).epsilon(1e-12));
  const double transfer = cluster.route_latency_s(0, 1) +
                          (weights + kv) / cluster.route_bottleneck_bandwidth_bytes_per_s(0, 1);
  CHECK(rc.transfer_s == doctest::Approx(transfer).epsilon(1e-12));
  CHECK(rc.pause_s() == doctest::Approx(rc.drained_s - rc.requested_s + transfer).epsilon(1e-12));
  // The drained iteration ends when it would have; every later one is as long as before.
  CHECK(after.requests[0].finish_s == doctest::Approx(plain.finish_s + transfer).epsilon(1e-9));
}

TEST_CASE("a re-split's pairs leaving one GPU share its link: twice the drain of each alone") {
  // Three stages on GPUs 0, 1, 2 of one DGX; layers 8,16,8 -> 12,8,12 moves layers 8-11 from
  // stage 1 to stage 0 and layers 20-23 from stage 1 to stage 2: two pairs of equal bytes S, both
  // leaving GPU 1 through its one link into the NVSwitch, B / 2 each. The moves take the route's
  // latency plus 2 S / B, where each pair alone would take latency + S / B.
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  REQUIRE(cluster.route(1, 0).front() == cluster.route(1, 2).front());
  REQUIRE(cluster.route_latency_s(1, 0) == cluster.route_latency_s(1, 2));
  ServingOptions o;
  o.replicas = 1;
  o.pp = 3;
  o.layers_per_stage = {8, 16, 8};
  o.resplit_at_s = 0.005;  // during the first prefill
  o.resplit_layers = {12, 8, 12};
  const ServingResult r = simulate_serving(cluster, catalog(), model, {{0.0, 300, 20}}, o);
  const Reconfiguration& rc = r.reconfigurations.at(0);
  CHECK(rc.layers_moved == 8);
  // Per pair: 4 layers of weights (bf16) and of the blocks in use (8 KV heads of 128, K and V).
  const double pair = 4 * (model.layer_params() * 2 + static_cast<double>(rc.kv_blocks) * 16 * (2 * 8 * 128 * 2));
  const double latency = cluster.route_latency_s(1, 0);
  const double bandwidth = cluster.route_bottleneck_bandwidth_bytes_per_s(1, 0);
  std::cout << "re-split of two pairs from GPU 1: each alone " << (latency + pair / bandwidth) * 1e3
            << " ms, sharing " << (latency + 2 * pair / bandwidth) * 1e3 << " ms; got " << rc.transfer_s * 1e3
            << " ms\n";
  CHECK(rc.transfer_s == doctest::Approx(latency + 2 * pair / bandwidth).epsilon(1e-12));
}

TEST_CASE("a re-split with nothing to move costs nothing; a bad one is refused before the run") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  ServingOptions o;
  o.replicas = 1;
  o.pp = 2;
  o.resplit_at_s = 0.01;
  o.resplit_layers = {16, 16};
  const ServingResult same = simulate_serving(cluster, catalog(), model, {{0.0, 300, 20}}, o);
  CHECK(same.reconfigurations.at(0).layers_moved == 0);
  CHECK(same.reconfigurations.at(0).transfer_s == 0);
  o.resplit_layers = {16, 17};
  CHECK_THROWS_WITH_AS(simulate_serving(cluster, catalog(), model, {{0.0, 300, 20}}, o),
                       doctest::Contains("sum to the 32 layers"), PlanError);
  o.pp = 1;
  o.resplit_layers = {32};
  CHECK_THROWS_AS(simulate_serving(cluster, catalog(), model, {{0.0, 300, 20}}, o), PlanError);
}

TEST_CASE("a cache shrunk by a re-split below the blocks in use preempts the newest sequences") {
  SchedulerLimits limits;
  limits.num_blocks = 8;
  limits.block_tokens = 4;
  limits.max_batched_tokens = 64;
  ReplicaScheduler s(SchedulerKind::kVllm, limits);
  s.enqueue(0, 8, 4);  // 2 blocks
  s.enqueue(1, 8, 4);  // 2 blocks
  Step step;
  StepOutcome outcome;
  REQUIRE(s.plan(step));
  s.complete(step, outcome);
  CHECK(s.used_blocks() == 4);
  s.resize_cache(6);  // still fits: nothing preempted
  CHECK(s.preemptions() == 0);
  CHECK(s.used_blocks() == 4);
  s.resize_cache(3);  // request 1 gives its 2 blocks back and waits to be recomputed
  CHECK(s.preemptions() == 1);
  CHECK(s.used_blocks() == 2);
  CHECK(s.outstanding() == 2);
}

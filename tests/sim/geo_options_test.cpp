// Geo-distributed training options: WAN compression divides what crosses the WAN by its ratio,
// and DiLoCo-style local steps (synchronise every H steps) carry 1/H of a gradient reduction per
// iteration. Checked against the uncompressed, every-step run on the shipped two-site cluster.
#include <doctest/doctest.h>

#include <string>

#include "base/error.hpp"
#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
RunResult run(int pp, double compression, int sync_every) {
  RunOptions o;
  o.plan.tp = 8;
  o.plan.pp = pp;
  o.plan.global_batch_size = 32;
  o.plan.seq_length = 4096;
  o.wan_compression = compression;
  o.sync_every = sync_every;
  return simulate_training(test::shipped_cluster("two-site-wan"), test::shipped_catalog(), test::shipped_model("llama-3-8b"), o);
}
}  // namespace

TEST_CASE("WAN compression divides the pipeline's WAN bytes and egress by its ratio") {
  // tp 8 x pp 2: pipeline rank 0 in one site, rank 1 in the other; only activations and
  // gradients between the stages cross the WAN.
  const RunResult plain = run(2, 1, 1);
  const RunResult compressed = run(2, 4, 1);
  REQUIRE(plain.bytes_wan > 0);
  CHECK(compressed.bytes_wan == doctest::Approx(plain.bytes_wan / 4).epsilon(1e-12));
  CHECK(compressed.egress_usd == doctest::Approx(plain.egress_usd / 4).epsilon(1e-12));
  CHECK(compressed.pipeline_time_s < plain.pipeline_time_s);
}

TEST_CASE("local steps carry 1/H of the gradient reduction; compression speeds a WAN ring") {
  // tp 8 x pp 1: four replicas, two per site, so the data-parallel ring crosses the WAN twice.
  const RunResult every = run(1, 1, 1);
  const RunResult local = run(1, 1, 4);
  REQUIRE(every.gradient_reduce_s_per_rank[0] > 0);
  CHECK(local.gradient_reduce_s_per_rank[0] ==
        doctest::Approx(every.gradient_reduce_s_per_rank[0] / 4).epsilon(1e-12));
  CHECK(local.bytes_wan == doctest::Approx(every.bytes_wan / 4).epsilon(1e-12));
  CHECK(local.iteration_time_s < every.iteration_time_s);
  // The WAN hop is the ring's bottleneck (100 Gbit/s against 400 Gbit/s NICs): compressing by 4
  // makes it as fast as a NIC, so the ring's bandwidth term shrinks by 4.
  const RunResult compressed = run(1, 4, 1);
  CHECK(compressed.gradient_reduce_s_per_rank[0] < every.gradient_reduce_s_per_rank[0]);
  CHECK(compressed.bytes_wan == doctest::Approx(every.bytes_wan / 4).epsilon(1e-12));
}

TEST_CASE("a compression ratio below 1 or a sync interval below 1 is refused") {
  CHECK_THROWS_WITH_AS(run(2, 0.5, 1), "--wan-compression 0.5 must be a finite ratio >= 1", PlanError);
  CHECK_THROWS_WITH_AS(run(2, 1, 0), "--sync-every 0 must be >= 1 (1: every step)", PlanError);
}

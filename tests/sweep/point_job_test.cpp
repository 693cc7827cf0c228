// Sweep points become jobs through `run`'s own option parsing: a key means what its flag means.
#include <doctest/doctest.h>

#include <algorithm>

#include "base/error.hpp"
#include "tools/sweep/point_job.hpp"

using namespace hetsim::sweep;
using nlohmann::json;

TEST_CASE("keys set the fields their flags set, aliases and long names alike") {
  const PointJob job = parse_point_job(json::parse(
      R"({"tensor-model-parallel-size": 8, "pp": 2, "seq-length": 4096, "use-flash-attn": true,
          "recompute-granularity": "selective", "layers-per-stage": [10, 6], "offload-fraction": 0.5,
          "schedule": "zb-h1"})"));
  const hetsim::ParallelPlan& plan = job.args.options.plan;
  CHECK(plan.tp == 8);
  CHECK(plan.pp == 2);
  CHECK(plan.seq_length == 4096);
  CHECK(plan.flash_attention);
  CHECK(job.args.recompute == "selective");
  CHECK(job.args.options.layers_per_stage == std::vector<int>{10, 6});
  CHECK(job.args.options.offload_fraction == 0.5);
  CHECK(job.args.options.schedule == "zb-h1");
  CHECK(job.args.schedule_given);
  // Keys not given keep run's defaults.
  CHECK(plan.global_batch_size == 64);
  CHECK(plan.micro_batch_size == 1);
  CHECK(job.variation.cache_key() == "|||");
}

TEST_CASE(
    "a flag given false stays off; without --schedule, vpp > 1 picks interleaved as run does") {
  const PointJob job = parse_point_job(json::parse(R"({"use-flash-attn": false, "vpp": 2})"));
  CHECK_FALSE(job.args.options.plan.flash_attention);
  CHECK_FALSE(job.args.schedule_given);
}

TEST_CASE("values run would reject are reasons naming the flag") {
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"tp": "eight"})")),
                       doctest::Contains("--tp"), hetsim::Error);
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"collectives": "smoke"})")),
                       doctest::Contains("smoke"), hetsim::Error);
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"wan_bandwidth_Gbps": 0})")),
                       "wan_bandwidth_Gbps: got 0; expected a number in [1e-06, 1e+07]", hetsim::Error);
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"wan_latency_ms": -1})")),
                       "wan_latency_ms: got -1; expected a number in [0, 10000]", hetsim::Error);
  // The cluster file's own ranges: 1e-320 Gbit/s used to end in "no WAN path", a latency of
  // 1e308 ms in a report that was not finite.
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"wan_bandwidth_Gbps": 1e-320})")),
                       doctest::Contains("expected a number in [1e-06, 1e+07]"), hetsim::Error);
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"wan_latency_ms": 1e308})")),
                       doctest::Contains("expected a number in [0, 10000]"), hetsim::Error);
  // An empty value used to swallow the next key's flag: --fp8-format: got "--gbs=64".
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"fp8-format": "", "gbs": 64})")),
                       "--fp8-format: got \"\"; expected a value (leave the key out for the default)",
                       hetsim::Error);
  CHECK_THROWS_WITH_AS(parse_point_job(json::parse(R"({"gpu_type": 3})")),
                       "gpu_type: got 3; expected a GPU type name", hetsim::Error);
}

TEST_CASE("the keys are run's long flag names and the cluster variations") {
  const auto& keys = job_keys();
  for (const char* key : {"tp", "tensor-model-parallel-size", "seq-length", "schedule", "cluster",
                          "model", "gpu_type", "wan_bandwidth_Gbps", "wan_latency_ms"}) {
    CAPTURE(key);
    CHECK(std::find(keys.begin(), keys.end(), key) != keys.end());
  }
  CHECK(std::find(keys.begin(), keys.end(), "help") == keys.end());
}

TEST_CASE("cluster variations replace every node group's GPU and every WAN link's figures") {
  hetsim::ClusterSpec spec;
  spec.source_file = "c.json";
  spec.sites.resize(2);
  spec.sites[0].node_groups.resize(2);
  spec.sites[1].node_groups.resize(1);
  spec.wan_links.resize(1);
  const PointJob job = parse_point_job(
      json::parse(R"({"gpu_type": "a100-80gb", "wan_bandwidth_Gbps": 25, "wan_latency_ms": 40})"));
  job.variation.apply(spec);
  for (const auto& site : spec.sites)
    for (const auto& group : site.node_groups) CHECK(group.gpu_type == "a100-80gb");
  CHECK(spec.wan_links[0].figures.bandwidth_bytes_per_s ==
        doctest::Approx(25e9 / 8));  // Gbit/s -> B/s
  CHECK(spec.wan_links[0].figures.latency_s == doctest::Approx(0.040));

  hetsim::ClusterSpec no_wan;
  no_wan.source_file = "one-site.json";
  CHECK_THROWS_WITH_AS(
      job.variation.apply(no_wan),
      "wan_bandwidth_Gbps / wan_latency_ms: cluster one-site.json has no WAN links to vary",
      hetsim::Error);
}

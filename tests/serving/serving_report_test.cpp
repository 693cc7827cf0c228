// The serving report's figures by hand on a tiny run: nearest-rank percentiles, goodput under
// SLOs, KV-cache use, dollars and energy from the catalog's prices and powers; and the router.
#include <doctest/doctest.h>

#include "base/units.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_report.hpp"

using namespace hetsim;
using namespace hetsim::serving;

TEST_CASE("nearest-rank percentiles") {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // 1..100, unsorted
  const Percentiles p = percentiles(v);
  CHECK(p.p50 == 50);
  CHECK(p.p90 == 90);
  CHECK(p.p99 == 99);
  CHECK(p.mean == 50.5);
  const Percentiles three = percentiles({3, 1, 2});
  CHECK(three.p50 == 2);  // ceil(1.5) = 2nd smallest
  CHECK(three.p90 == 3);
  CHECK(percentiles({}).count == 0);
}

TEST_CASE("report of a hand-made run: latencies, goodput, KV use, dollars and energy") {
  const Cluster cluster = test::shipped_cluster("dgx-a100-1node.json");
  ServingResult r;
  // Two requests on one replica of one A100: (arrival, first token, finish, prompt, output).
  r.requests = {{0.0, 0.1, 0.5, 100, 5}, {0.2, 0.6, 2.0, 50, 3}};
  r.makespan_s = 2.0;
  ReplicaStats rep;
  rep.gpus = {0};
  rep.stage_gpu_types = {"a100-80gb"};
  rep.kv_blocks = 100;
  rep.peak_blocks_used = 20;
  rep.block_seconds = 30;  // 15 blocks on average over 2 s
  rep.stage_busy_s = {1.5};
  rep.preemptions = 1;
  r.replicas = {rep};
  const ServingMetrics m = serving_metrics(r, cluster, test::catalog(), {0.3, 0.2});
  // TTFT 0.1 and 0.4 s; TPOT 0.4/4 = 0.1 and 1.4/2 = 0.7 s; E2E 0.5 and 1.8 s.
  CHECK(m.ttft.p50 == doctest::Approx(0.1));
  CHECK(m.ttft.p99 == doctest::Approx(0.4));
  CHECK(m.tpot.p50 == doctest::Approx(0.1));
  CHECK(m.tpot.p90 == doctest::Approx(0.7));
  CHECK(m.e2e.mean == doctest::Approx(1.15));
  CHECK(m.requests_per_s == doctest::Approx(1.0));
  CHECK(m.output_tokens_per_s == doctest::Approx(4.0));
  CHECK(m.total_tokens_per_s == doctest::Approx(79.0));
  // Only the first meets TTFT <= 0.3 s and TPOT <= 0.2 s.
  CHECK(m.slo_met == 1);
  CHECK(m.goodput_requests_per_s == doctest::Approx(0.5));
  CHECK(m.kv_peak_fraction == doctest::Approx(0.2));
  CHECK(m.kv_mean_fraction == doctest::Approx(0.15));
  CHECK(m.preemptions == 1);
  const GpuSpec& a100 = test::catalog().at("a100-80gb");
  CHECK(m.gpu_usd == doctest::Approx(a100.usd_per_hour * 2.0 / units::kSecondsPerHour));
  CHECK(m.usd_per_million_output_tokens == doctest::Approx(m.gpu_usd / 8 * 1e6));
  // 1.5 s busy at the board power limit, 0.5 s idle.
  const double joules = 1.5 * a100.max_power_w + 0.5 * a100.idle_power_w;
  CHECK(m.energy_kwh == doctest::Approx(joules / 3.6e6));
  CHECK(m.joules_per_output_token == doctest::Approx(joules / 8));
  // No SLO given: every request counts.
  CHECK(serving_metrics(r, cluster, test::catalog(), {}).slo_met == 2);
  const ServingContext context{"c.json", "m.json", "llama", "trace t.csv", "vllm", "round-robin", 1, 1, {0.3, 0.2}};
  const auto json = serving_report_json(r, m, context);
  CHECK(json["ttft"]["p99_ms"].get<double>() == doctest::Approx(400));
  CHECK(json["slo"]["tpot_ms"].get<double>() == doctest::Approx(200));
  const std::string table = serving_report_table(r, m, context);
  CHECK(table.find("goodput        0.500 requests/s (1 of 2 within TTFT 300 ms and TPOT 200 ms)") != std::string::npos);
}

TEST_CASE("routers: round-robin in turn, least-outstanding to the emptiest (lowest index on a tie)") {
  Router rr(RouterKind::kRoundRobin);
  CHECK(rr.pick({5, 0, 0}) == 0);
  CHECK(rr.pick({5, 0, 0}) == 1);
  CHECK(rr.pick({5, 0, 0}) == 2);
  CHECK(rr.pick({5, 0, 0}) == 0);
  Router least(RouterKind::kLeastOutstanding);
  CHECK(least.pick({5, 2, 2}) == 1);
  CHECK(least.pick({0, 2, 0}) == 0);
  CHECK(router_from_string("least-outstanding") == RouterKind::kLeastOutstanding);
  CHECK_THROWS_WITH(router_from_string("random"),
                    "command line: --router: got random; expected one of round-robin, least-outstanding");
  CHECK_THROWS_WITH(scheduler_from_string("fcfs"), "command line: --scheduler: got fcfs; expected one of vllm, sarathi, orca");
}

TEST_CASE("least-outstanding spreads a burst evenly; round-robin ignores load") {
  const Cluster cluster = test::shipped_cluster("dgx-a100-1node.json");
  const TransformerConfig model = test::shipped_model("llama-3-8b.json");
  // Long requests first, then short ones, all at once, on 2 replicas: round-robin alternates, so
  // replica 0 gets every long one; least-outstanding balances by count, the same here, but sends a
  // late request to the replica that has drained.
  std::vector<Request> requests{{0.0, 64, 400}, {0.0, 64, 2}, {0.0, 64, 400}, {0.0, 64, 2}, {1.0, 64, 2}};
  ServingOptions o;
  o.replicas = 2;
  o.router = RouterKind::kRoundRobin;
  const ServingResult rr = simulate_serving(cluster, test::catalog(), model, requests, o);
  CHECK(rr.requests[4].replica == 0);  // the 5th in turn, behind two long requests
  o.router = RouterKind::kLeastOutstanding;
  const ServingResult least = simulate_serving(cluster, test::catalog(), model, requests, o);
  CHECK(least.requests[4].replica == 1);  // replica 1's short requests are done by 1 s
  CHECK(least.requests[4].finish_s < rr.requests[4].finish_s);
}

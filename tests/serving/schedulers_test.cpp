// Each scheduler against closed forms built from the iteration cost: one request on one replica
// (TTFT = the prefill iteration, TPOT = the mean decode iteration), two requests whose second
// arrives while the first decodes (where the policies part ways), and preemption when the KV
// cache runs out.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>

#include "base/error.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_run.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;

namespace {

struct Fixture {
  Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  ReplicaCost cost = make_cost();
  ReplicaCost make_cost() const {
    StageHardware hw;
    hw.gpu = &catalog().at("a100-80gb");
    return ReplicaCost(model, Dtype::kBf16, 1, {hw});
  }
  double prefill(long chunk, long cached, bool emits) const {
    IterationWork w;
    w.add_prefill(chunk, cached, emits);
    return cost.iteration_seconds(w);
  }
  double decodes(std::initializer_list<long> cached) const {
    IterationWork w;
    for (const long c : cached) w.add_decode(c);
    return cost.iteration_seconds(w);
  }
  ServingResult serve(SchedulerKind kind, const std::vector<Request>& requests, long max_batched_tokens = 0) const {
    ServingOptions o;
    o.scheduler = kind;
    o.replicas = 1;
    o.max_batched_tokens = max_batched_tokens;
    return simulate_serving(cluster, catalog(), model, requests, o);
  }
};

constexpr double kEps = 1e-12;

}  // namespace

TEST_CASE("one request, one replica: TTFT is the prefill, TPOT the mean decode step, every scheduler") {
  const Fixture f;
  const std::vector<Request> one{{0.0, 100, 5}};
  const double ttft = f.prefill(100, 0, true);
  // Four decode steps, the k-th reading 100 + k cached keys plus its own.
  double decode_sum = 0;
  for (long k = 0; k < 4; ++k) decode_sum += f.decodes({100 + k});
  for (const auto kind : {SchedulerKind::kVllm, SchedulerKind::kSarathi, SchedulerKind::kOrca}) {
    const ServingResult r = f.serve(kind, one);
    const RequestOutcome& out = r.requests[0];
    const double tpot = (out.finish_s - out.first_token_s) / 4;
    std::cout << to_string(kind) << ": TTFT " << out.first_token_s * 1e3 << " ms (expected " << ttft * 1e3
              << "), TPOT " << tpot * 1e3 << " ms (expected " << decode_sum / 4 * 1e3 << ")\n";
    CHECK(out.first_token_s == doctest::Approx(ttft).epsilon(kEps));
    CHECK(tpot == doctest::Approx(decode_sum / 4).epsilon(kEps));
    CHECK(r.replicas[0].iterations == 5);
    CHECK(r.replicas[0].preemptions == 0);
    CHECK(r.makespan_s == doctest::Approx(ttft + decode_sum).epsilon(kEps));
  }
}

TEST_CASE("Sarathi chunks a long prompt to its token budget") {
  const Fixture f;
  const ServingResult r = f.serve(SchedulerKind::kSarathi, {{0.0, 1000, 1}});
  // Budget 512 (the default): 512 tokens, then 488 more after them, which emit the token.
  const double ttft = f.prefill(512, 0, false) + f.prefill(488, 512, true);
  CHECK(r.max_batched_tokens == 512);
  CHECK(r.requests[0].first_token_s == doctest::Approx(ttft).epsilon(kEps));
  CHECK(r.requests[0].finish_s == r.requests[0].first_token_s);
}

TEST_CASE("a second request arriving during a decode: vLLM stalls the decode, Orca and Sarathi mix") {
  const Fixture f;
  const double t1 = f.prefill(100, 0, true);
  const double t2 = t1 + f.decodes({100});
  const std::vector<Request> two{{0.0, 100, 3}, {t1 + 0.5 * (t2 - t1), 100, 3}};

  SUBCASE("vLLM: a prefill-only iteration for B, then both decode") {
    const ServingResult r = f.serve(SchedulerKind::kVllm, two);
    const double t3 = t2 + f.prefill(100, 0, true);
    IterationWork both;
    both.add_decode(101);
    both.add_decode(100);
    const double t4 = t3 + f.cost.iteration_seconds(both);
    const double t5 = t4 + f.decodes({101});
    CHECK(r.requests[0].first_token_s == doctest::Approx(t1).epsilon(kEps));
    CHECK(r.requests[1].first_token_s == doctest::Approx(t3).epsilon(kEps));
    CHECK(r.requests[0].finish_s == doctest::Approx(t4).epsilon(kEps));
    CHECK(r.requests[1].finish_s == doctest::Approx(t5).epsilon(kEps));
  }
  SUBCASE("Orca: A's decode and B's whole prompt in one iteration") {
    const ServingResult r = f.serve(SchedulerKind::kOrca, two);
    IterationWork mixed;
    mixed.add_decode(101);
    mixed.add_prefill(100, 0, true);
    const double t3 = t2 + f.cost.iteration_seconds(mixed);
    const double t5 = t3 + f.decodes({100}) + f.decodes({101});
    CHECK(r.requests[0].finish_s == doctest::Approx(t3).epsilon(kEps));
    CHECK(r.requests[1].first_token_s == doctest::Approx(t3).epsilon(kEps));
    CHECK(r.requests[1].finish_s == doctest::Approx(t5).epsilon(kEps));
  }
  SUBCASE("Sarathi, budget 64: decodes first, prompts in chunks of what is left") {
    const double s1 = f.prefill(64, 0, false) + f.prefill(36, 64, true);
    const double s2 = s1 + f.decodes({100});
    const std::vector<Request> chunked{{0.0, 100, 3}, {s1 + 0.5 * (s2 - s1), 100, 3}};
    const ServingResult r = f.serve(SchedulerKind::kSarathi, chunked, 64);
    IterationWork mixed;
    mixed.add_decode(101);
    mixed.add_prefill(63, 0, false);
    const double s3 = s2 + f.cost.iteration_seconds(mixed);
    const double s4 = s3 + f.prefill(37, 63, true);
    const double s6 = s4 + f.decodes({100}) + f.decodes({101});
    CHECK(r.requests[0].first_token_s == doctest::Approx(s1).epsilon(kEps));
    CHECK(r.requests[0].finish_s == doctest::Approx(s3).epsilon(kEps));
    CHECK(r.requests[1].first_token_s == doctest::Approx(s4).epsilon(kEps));
    CHECK(r.requests[1].finish_s == doctest::Approx(s6).epsilon(kEps));
  }
}

TEST_CASE("vLLM preempts the newest sequence when a decode finds no free block, then recomputes it") {
  // 4 blocks of 4 tokens. A: 8-token prompt, 6 outputs (13 tokens cached at most: 4 blocks);
  // B: 4-token prompt, 4 outputs.
  SchedulerLimits limits;
  limits.num_blocks = 4;
  limits.block_tokens = 4;
  limits.max_batched_tokens = 64;
  ReplicaScheduler s(SchedulerKind::kVllm, limits);
  s.enqueue(0, 8, 6);
  s.enqueue(1, 4, 4);
  Step step;
  StepOutcome out;
  REQUIRE(s.plan(step));  // both prompts: 2 + 1 blocks
  CHECK(step.work.prefill_tokens == 12);
  CHECK(s.used_blocks() == 3);
  s.complete(step, out);
  CHECK(out.first_tokens == std::vector<int>{0, 1});
  REQUIRE(s.plan(step));  // A takes the last block for token 9; B finds none and is preempted
  CHECK(s.preemptions() == 1);
  REQUIRE(step.entries.size() == 1);
  CHECK(step.work.decode_tokens == 1);
  CHECK(s.used_blocks() == 3);
  s.complete(step, out);
  for (int k = 0; k < 4; ++k) {  // A decodes to its 6th token; B (5 tokens: 2 blocks) waits
    REQUIRE(s.plan(step));
    CHECK(step.work.prefill_tokens == 0);
    s.complete(step, out);
  }
  CHECK(out.finished == std::vector<int>{0});
  CHECK(s.used_blocks() == 0);
  REQUIRE(s.plan(step));  // B recomputed: its prompt and the token it had, emitting its 2nd
  CHECK(step.work.prefill_tokens == 5);
  s.complete(step, out);
  CHECK(out.first_tokens.empty());
  for (int k = 0; k < 2; ++k) {
    REQUIRE(s.plan(step));
    s.complete(step, out);
  }
  CHECK(out.finished == std::vector<int>{1});
  CHECK_FALSE(s.plan(step));
  CHECK(s.outstanding() == 0);
}

TEST_CASE("Orca reserves every output token's blocks on admission and never preempts") {
  SchedulerLimits limits;
  limits.num_blocks = 4;
  limits.block_tokens = 4;
  limits.max_batched_tokens = 64;
  ReplicaScheduler s(SchedulerKind::kOrca, limits);
  s.enqueue(0, 8, 6);  // 13 tokens: all 4 blocks
  s.enqueue(1, 4, 4);
  Step step;
  StepOutcome out;
  REQUIRE(s.plan(step));
  CHECK(step.work.prefill_tokens == 8);  // B waits for A's blocks
  CHECK(s.used_blocks() == 4);
  int iterations = 1;
  s.complete(step, out);
  while (s.plan(step)) {
    s.complete(step, out);
    ++iterations;
  }
  CHECK(s.preemptions() == 0);
  CHECK(iterations == 6 + 4);  // A alone, then B alone
}

TEST_CASE("requests a replica can never hold are refused before the run") {
  const Fixture f;
  CHECK_THROWS_WITH_AS(f.serve(SchedulerKind::kVllm, {{0.0, 5000, 10}}, 4096),
                       doctest::Contains("a request of 5009 tokens (prompt + output - 1) exceeds --max-batched-tokens 4096"),
                       PlanError);
  CHECK_THROWS_WITH_AS(f.serve(SchedulerKind::kSarathi, {{0.0, 900000, 10}}),
                       doctest::Contains("KV-cache blocks; replica 0 holds"), PlanError);
  ServingOptions o;
  o.tp = 4;
  o.replicas = 3;
  CHECK_THROWS_WITH_AS(simulate_serving(f.cluster, catalog(), f.model, {{0.0, 10, 10}}, o),
                       doctest::Contains("3 replicas of tp 4 x pp 1 need 12 GPUs; cluster dgx-a100-1node has 8"),
                       PlanError);
}

TEST_CASE("pipeline-parallel replica: micro-batches overlap on the stages, waiting where a stage is busy") {
  // Two stages of 16 layers on one DGX A100 (stage 0 also embeds, stage 1 also runs the LM
  // head), one micro-batch in flight per stage. A and B arrive together and go to different
  // micro-batches; B's prefill enters stage 0 as soon as A's leaves it.
  const Fixture f;
  ServingOptions o;
  o.pp = 2;
  o.replicas = 1;
  const std::vector<Request> two{{0.0, 100, 2}, {0.0, 100, 2}};
  const ServingResult r = simulate_serving(f.cluster, catalog(), f.model, two, o);

  StageHardware first, second;
  first.gpu = second.gpu = &catalog().at("a100-80gb");
  first.tp_links = second.tp_links = {f.cluster.intra_node_bandwidth_bytes_per_s(0), f.cluster.intra_node_latency_s(0)};
  first.next_latency_s = f.cluster.route_latency_s(0, 1);
  first.next_bandwidth_bytes_per_s = f.cluster.route_bottleneck_bandwidth_bytes_per_s(0, 1);
  const ReplicaCost cost(f.model, Dtype::kBf16, 1, {first, second});
  IterationWork prefill, decode;
  prefill.add_prefill(100, 0, true);
  decode.add_decode(100);
  const double a0 = cost.stage_seconds(0, prefill), a1 = cost.stage_seconds(1, prefill);
  const double x = cost.transfer_seconds(0, prefill);
  const double d0 = cost.stage_seconds(0, decode), d1 = cost.stage_seconds(1, decode);
  const double xd = cost.transfer_seconds(0, decode);
  const double ttft_a = a0 + x + a1;
  const double ttft_b = std::max(2 * a0 + x, ttft_a) + a1;
  // A's decode enters stage 0 when A's first token is out; stage 1 still holds B's prefill.
  const double a_decode_stage1 = std::max(std::max(ttft_a, 2 * a0) + d0 + xd, ttft_b);
  std::cout << "pp 2: stage times prefill " << a0 * 1e3 << " / " << a1 * 1e3 << " ms, hand-over " << x * 1e6
            << " us; TTFT A " << ttft_a * 1e3 << " ms, B " << ttft_b * 1e3 << " ms (B waits "
            << (ttft_b - ttft_a) * 1e3 << " ms, not a whole iteration)\n";
  CHECK(r.requests[0].first_token_s == doctest::Approx(ttft_a).epsilon(kEps));
  CHECK(r.requests[1].first_token_s == doctest::Approx(ttft_b).epsilon(kEps));
  CHECK(r.requests[0].finish_s == doctest::Approx(a_decode_stage1 + d1).epsilon(kEps));
  CHECK(ttft_b < 2 * ttft_a);  // overlapped, unlike one iteration at a time
  CHECK(r.replicas[0].stage_busy_s[0] == doctest::Approx(2 * a0 + 2 * d0).epsilon(kEps));
  CHECK(r.replicas[0].kv_blocks / 2 >= 7);  // each micro-batch holds its share of the blocks
}

TEST_CASE("disaggregated: the prefill replica emits the first token, the KV cache crosses to a decode replica") {
  // Replica 0 (GPU 0) prefills, replica 1 (GPU 1) decodes; the prompt's 100 tokens of K and V,
  // 131,072 bytes each for Llama-3-8B in bf16, go over the NVSwitch route from GPU 0 to GPU 1.
  const Fixture f;
  ServingOptions o;
  o.replicas = 2;
  o.prefill_replicas = 1;
  const ServingResult r = simulate_serving(f.cluster, catalog(), f.model, {{0.0, 100, 3}, {0.0, 50, 1}}, o);
  const double ttft = f.prefill(100, 0, true);
  const double transfer = f.cluster.route_latency_s(0, 1) +
                          100 * 131072.0 / f.cluster.route_bottleneck_bandwidth_bytes_per_s(0, 1);
  const double finish = ttft + transfer + f.decodes({100}) + f.decodes({101});
  // The first arrival starts replica 0 at once; the second, at the same time but a later event,
  // prefills next and ends there with its only token.
  CHECK(r.requests[0].first_token_s == doctest::Approx(ttft).epsilon(kEps));
  CHECK(r.requests[1].finish_s == doctest::Approx(ttft + f.prefill(50, 0, true)).epsilon(kEps));
  CHECK(r.requests[1].replica == 0);
  CHECK(r.requests[0].prefill_replica == 0);
  CHECK(r.requests[0].replica == 1);
  CHECK(r.requests[0].finish_s == doctest::Approx(finish).epsilon(kEps));
  CHECK(r.kv_transfer_bytes == 100 * 131072.0);
  CHECK(r.kv_transfer_egress_usd == 0.0);
  o.prefill_replicas = 2;
  CHECK_THROWS_WITH_AS(simulate_serving(f.cluster, catalog(), f.model, {{0.0, 100, 3}}, o),
                       doctest::Contains("--prefill-replicas 2 must leave at least one of the 2 replicas to decode"),
                       PlanError);
}

TEST_CASE("disaggregated: KV caches handed over together share the link into their decode replica") {
  // Replicas 0 and 1 (GPUs 0, 1) each prefill one of two equal prompts arriving at once and finish
  // together; with one decode replica (GPU 2) both caches cross the NVSwitch's link into GPU 2 at
  // once, B / 2 each, and arrive after the latency plus twice the drain; with two decode replicas
  // (GPUs 2, 3) they cross no link in common and arrive after the closed form. A request decodes
  // as soon as its cache has fully arrived; sharing one replica, the second to arrive (of two
  // arriving at the same time) waits for the first's decode step.
  const Fixture f;
  const std::vector<Request> two{{0.0, 100, 2}, {0.0, 100, 2}};
  ServingOptions o;
  o.prefill_replicas = 2;
  const double ttft = f.prefill(100, 0, true);
  const double latency = f.cluster.route_latency_s(0, 2);
  const double drain = 100 * 131072.0 / f.cluster.route_bottleneck_bandwidth_bytes_per_s(0, 2);
  const double decode = f.decodes({100});
  o.replicas = 3;
  const ServingResult shared = simulate_serving(f.cluster, catalog(), f.model, two, o);
  o.replicas = 4;
  const ServingResult apart = simulate_serving(f.cluster, catalog(), f.model, two, o);
  std::cout << "KV caches of 100 tokens: alone " << (latency + drain) * 1e6 << " us, sharing a link "
            << (latency + 2 * drain) * 1e6 << " us; first finish " << std::min(shared.requests[0].finish_s, shared.requests[1].finish_s) * 1e6
            << " us shared, " << apart.requests[0].finish_s * 1e6 << " us apart\n";
  CHECK(shared.requests[0].replica == 2);
  CHECK(shared.requests[1].replica == 2);
  CHECK(shared.requests[0].first_token_s == doctest::Approx(ttft).epsilon(kEps));
  const auto [first, second] = std::minmax(shared.requests[0].finish_s, shared.requests[1].finish_s);
  CHECK(first == doctest::Approx(ttft + latency + 2 * drain + decode).epsilon(kEps));
  CHECK(second == doctest::Approx(ttft + latency + 2 * drain + 2 * decode).epsilon(kEps));
  CHECK(apart.requests[0].replica == 2);
  CHECK(apart.requests[1].replica == 3);
  for (const RequestOutcome& r : apart.requests)
    CHECK(r.finish_s == doctest::Approx(ttft + latency + drain + decode).epsilon(kEps));
}

// Speculative decoding against closed forms built from the iteration cost: at acceptance rate 1
// every step emits K + 1 tokens for K draft passes and one verification pass, at 0 every step
// emits one; over many seeded steps the mean tokens per step meets Leviathan et al.'s eq. 1
// within its sampling error; in a pipeline the draft runs on the first stage before the target.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "base/error.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_run.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;

namespace {

constexpr double kEps = 1e-12;

struct Fixture {
  Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  TransformerConfig draft = hetsim::test::shipped_model("llama-3.2-1b.json");
  StageHardware a100 = [] {
    StageHardware hw;
    hw.gpu = &catalog().at("a100-80gb");
    return hw;
  }();
  ReplicaCost target_cost = ReplicaCost(model, Dtype::kBf16, 1, {a100});
  ReplicaCost draft_cost = ReplicaCost(draft, Dtype::kBf16, 1, {a100});

  // One decode step of a sequence with `cached` tokens that proposes `k` tokens: k draft passes,
  // then the target's pass over the last token and the proposals (a plain decode when k = 0).
  // `behind`: the last step's proposals were all accepted, so the draft's first pass also reads
  // its last proposal.
  double step(const ReplicaCost& target, long cached, long k, bool behind = false) const {
    double seconds = 0;
    for (long j = 0; j < k; ++j) {
      IterationWork pass;
      if (j == 0 && behind) {
        pass.add_prefill(2, cached - 1, true);
      } else {
        pass.add_decode(cached + j);
      }
      seconds += draft_cost.iteration_seconds(pass);
    }
    IterationWork verify;
    if (k == 0) {
      verify.add_decode(cached);
    } else {
      verify.add_verification(k + 1, cached);
    }
    return seconds + target.iteration_seconds(verify);
  }
  // The prompt's prefill on the target and on the draft, which caches it too.
  double prefill(const ReplicaCost& target, long prompt) const {
    IterationWork t, d;
    t.add_prefill(prompt, 0, true);
    d.add_prefill(prompt, 0, false);
    return target.iteration_seconds(t) + draft_cost.iteration_seconds(d);
  }
  ServingResult serve(const std::vector<Request>& requests, int k, double alpha, int pp = 1) const {
    ServingOptions o;
    o.replicas = 1;
    o.pp = pp;
    o.draft_model = &draft;
    o.spec_tokens = k;
    o.acceptance_rate = alpha;
    return simulate_serving(cluster, catalog(), model, requests, o);
  }
};

// The replica's speculation counters: sequence-steps that verified, draft tokens proposed and
// accepted, tokens those steps emitted.
void check_speculation(const SpeculationStats& s, long verifications, long proposed, long accepted,
                       long emitted) {
  CHECK(s.verifications == verifications);
  CHECK(s.proposed == proposed);
  CHECK(s.accepted == accepted);
  CHECK(s.emitted == emitted);
}

}  // namespace

TEST_CASE(
    "acceptance rate 1: every step emits K + 1 tokens, TPOT = (K draft passes + verification) / (K "
    "+ 1)") {
  const Fixture f;
  // 1 token from the prefill, then two steps of 3 proposals + 1.
  const ServingResult r = f.serve({{0.0, 100, 9}}, 3, 1.0);
  const RequestOutcome& out = r.requests[0];
  const double ttft = f.prefill(f.target_cost, 100);
  const double decode = f.step(f.target_cost, 100, 3) + f.step(f.target_cost, 104, 3, true);
  CHECK(out.first_token_s == doctest::Approx(ttft).epsilon(kEps));
  CHECK((out.finish_s - out.first_token_s) / 8 == doctest::Approx(decode / 8).epsilon(kEps));
  CHECK(r.replicas[0].iterations == 3);
  check_speculation(r.replicas[0].speculation, 2, 6, 6, 8);
}

TEST_CASE("acceptance rate 0: every step emits one token; proposals shrink to the output left") {
  const Fixture f;
  const ServingResult r = f.serve({{0.0, 100, 5}}, 3, 0.0);
  const RequestOutcome& out = r.requests[0];
  // Four tokens after the first: 3, 2 and 1 proposals (never past the output), then a plain decode.
  const double decode = f.step(f.target_cost, 100, 3) + f.step(f.target_cost, 101, 2) +
                        f.step(f.target_cost, 102, 1) + f.step(f.target_cost, 103, 0);
  CHECK(out.finish_s - out.first_token_s == doctest::Approx(decode).epsilon(kEps));
  CHECK(r.replicas[0].iterations == 5);
  check_speculation(r.replicas[0].speculation, 3, 6, 0, 3);
}

TEST_CASE("speculation off leaves a decode step as it was") {
  const Fixture f;
  ServingOptions o;
  o.replicas = 1;
  const ServingResult plain = simulate_serving(f.cluster, catalog(), f.model, {{0.0, 100, 5}}, o);
  double decode = 0;
  for (long c = 100; c < 104; ++c) {
    IterationWork w;
    w.add_decode(c);
    decode += f.target_cost.iteration_seconds(w);
  }
  CHECK(plain.requests[0].finish_s - plain.requests[0].first_token_s ==
        doctest::Approx(decode).epsilon(kEps));
  CHECK(plain.replicas[0].speculation.verifications == 0);
  CHECK(plain.replicas[0].draft_busy_s == 0);
}

TEST_CASE("over many seeded steps the mean tokens per step is eq. 1's (1 - a^(K+1)) / (1 - a)") {
  constexpr int kDraft = 4;
  constexpr double kAlpha = 0.7;
  std::mt19937_64 rng(1);
  SchedulerLimits limits;
  limits.num_blocks = 1 << 16;
  limits.max_batched_tokens = 1 << 20;
  ReplicaScheduler s(SchedulerKind::kVllm, limits, {kDraft, kAlpha, &rng});
  // A sequence long enough that nearly every step proposes K tokens.
  s.enqueue(0, 16, 200000);
  Step step;
  StepOutcome outcome;
  while (s.plan(step)) s.complete(step, outcome);
  const SpeculationStats& st = s.speculation_stats();
  const double n = static_cast<double>(st.verifications);
  const double mean = static_cast<double>(st.emitted) / n;
  const double expected = (1 - std::pow(kAlpha, kDraft + 1)) / (1 - kAlpha);
  // Emitted tokens per step: i + 1 with probability a^i (1 - a) for i < K, K + 1 with a^K.
  double second_moment = std::pow(kAlpha, kDraft) * (kDraft + 1) * (kDraft + 1);
  for (int i = 0; i < kDraft; ++i)
    second_moment += std::pow(kAlpha, i) * (1 - kAlpha) * (i + 1) * (i + 1);
  const double standard_error = std::sqrt((second_moment - expected * expected) / n);
  INFO("steps " << n << ", mean " << mean << ", eq. 1 " << expected << ", standard error "
                << standard_error);
  CHECK(expected_tokens_per_step(kAlpha, kDraft) == doctest::Approx(expected).epsilon(kEps));
  CHECK(st.expected_emitted / n ==
        doctest::Approx(expected).epsilon(1e-4));  // the last steps propose fewer
  // Four standard errors: a correct sampler fails this about once in 16,000 seeds.
  CHECK(std::abs(mean - expected) < 4 * standard_error);
  // The prefill's token, the verification steps' and at most one plain decode with one token left.
  CHECK(st.emitted + 1 >= 200000 - 1);
  CHECK(st.emitted + 1 <= 200000);
}

TEST_CASE("in a pipeline the draft runs on the first stage before the target's two stages") {
  const Fixture f;
  StageHardware first = f.a100, second = f.a100;
  first.next_latency_s = f.cluster.route_latency_s(0, 1);
  first.next_bandwidth_bytes_per_s = f.cluster.route_bottleneck_bandwidth_bytes_per_s(0, 1);
  const ReplicaCost pipeline(f.model, Dtype::kBf16, 1, {first, second});
  const ServingResult r = f.serve({{0.0, 100, 9}}, 3, 1.0, 2);
  const RequestOutcome& out = r.requests[0];
  CHECK(out.first_token_s == doctest::Approx(f.prefill(pipeline, 100)).epsilon(kEps));
  const double decode = f.step(pipeline, 100, 3) + f.step(pipeline, 104, 3, true);
  CHECK(out.finish_s - out.first_token_s == doctest::Approx(decode).epsilon(kEps));
  // Stage 0 computed the draft's passes and its own layers; stage 1 only its layers.
  double draft = 0;
  for (const long cached : {100L, 104L})
    draft += f.step(pipeline, cached, 3, cached == 104) - pipeline.iteration_seconds([&] {
      IterationWork w;
      w.add_verification(4, cached);
      return w;
    }());
  IterationWork draft_prompt;
  draft_prompt.add_prefill(100, 0, false);
  draft += f.draft_cost.iteration_seconds(draft_prompt);
  CHECK(r.replicas[0].draft_busy_s == doctest::Approx(draft).epsilon(1e-9));
}

TEST_CASE(
    "speculative decoding refuses K < 1, an acceptance rate outside [0, 1] and another "
    "vocabulary") {
  Fixture f;
  CHECK_THROWS_AS(f.serve({{0.0, 100, 9}}, 0, 0.5), PlanError);
  CHECK_THROWS_AS(f.serve({{0.0, 100, 9}}, 2, 1.5), PlanError);
  CHECK_THROWS_AS(f.serve({{0.0, 100, 9}}, 2, -0.1), PlanError);
  f.draft = hetsim::test::shipped_model("llama-2-7b.json");
  CHECK_THROWS_WITH_AS(f.serve({{0.0, 100, 9}}, 2, 0.5), doctest::Contains("vocabulary of 32000"),
                       PlanError);
}

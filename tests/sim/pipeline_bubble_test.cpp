// Pipeline closed forms, replayed by the engine with abstract op times and free communication.
// GPipe (Huang et al. 2019) and 1F1B (Narayanan et al. 2021, PipeDream-Flush): with equal stages,
// the makespan is (m + p - 1)(F + B) and the bubble fraction (p - 1)/(m + p - 1). The first
// stage holds m microbatches of activations under GPipe and min(p, m) under 1F1B.
#include <doctest/doctest.h>

#include <cstdio>
#include <limits>

#include "base/error.hpp"
#include "schedules/generators.hpp"
#include "sim/abstract_schedule.hpp"

using namespace hetsim;

namespace {
void check_exact(double actual, double expected, const std::string& what) {
  std::printf("  %-40s expected %.12g, actual %.12g\n", what.c_str(), expected, actual);
  CHECK(std::abs(actual - expected) <= 1e-9 * std::abs(expected));
}
}  // namespace

TEST_CASE("GPipe and 1F1B bubble fraction is (p-1)/(m+p-1)") {
  struct Case { int p, m; double f, b; };
  for (const Case c : {Case{2, 1, 1, 1}, Case{4, 8, 1, 2}, Case{8, 16, 1.5, 3}, Case{8, 4, 1, 1},
                       Case{16, 64, 0.7, 1.9}, Case{3, 7, 2, 1}}) {
    for (const bool gpipe : {true, false}) {
      const Timetable t = gpipe ? make_gpipe(c.p, c.m) : make_1f1b(c.p, c.m);
      const ScheduleReplay r = replay_schedule(t, AbstractCosts{c.f, c.b, 0, 0});
      const std::string name = std::string(gpipe ? "gpipe" : "1f1b") + " p=" + std::to_string(c.p) +
                               " m=" + std::to_string(c.m);
      check_exact(r.makespan, (c.m + c.p - 1) * (c.f + c.b), name + " makespan");
      check_exact(r.bubble_fraction, (c.p - 1.0) / (c.m + c.p - 1.0), name + " bubble");
    }
  }
}

TEST_CASE("1F1B with F = B = W = 1 per stage, p = 8, m = 16: makespan 69") {
  // Unsplit backward runs B + W = 2: (m + p - 1)(F + B + W) = 23 * 3 = 69 (the zero-bubble
  // paper's baseline figure for this setting).
  const ScheduleReplay r = replay_schedule(make_1f1b(8, 16), AbstractCosts{1, 1, 1, 0});
  check_exact(r.makespan, 69, "1f1b p=8 m=16 makespan");
}

TEST_CASE("first-stage peak activations: m under GPipe, min(p, m) under 1F1B") {
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{8, 16}, std::pair{8, 3}, std::pair{6, 6}}) {
    const ScheduleReplay gpipe = replay_schedule(make_gpipe(p, m), AbstractCosts{});
    const ScheduleReplay one_f_one_b = replay_schedule(make_1f1b(p, m), AbstractCosts{});
    const std::string name = "p=" + std::to_string(p) + " m=" + std::to_string(m);
    check_exact(gpipe.peak_activations[0], m, "gpipe rank 0 peak, " + name);
    check_exact(one_f_one_b.peak_activations[0], std::min(p, m), "1f1b rank 0 peak, " + name);
    // Later 1F1B ranks hold fewer: min(p - rank, m).
    for (int r = 0; r < p; ++r) CHECK(one_f_one_b.peak_activations[r] == std::min(p - r, m));
  }
}

TEST_CASE("a transfer time delays every cross-rank dependency") {
  // GPipe with one microbatch is a chain of p forwards and p backwards with 2(p - 1) transfers.
  const int p = 5;
  const double f = 1, b = 2, c = 0.25;
  const ScheduleReplay r = replay_schedule(make_gpipe(p, 1), AbstractCosts{f, b, 0, c});
  check_exact(r.makespan, p * (f + b) + 2 * (p - 1) * c, "chain with transfers");
}

TEST_CASE("a replay that cannot finish names what waits for what") {
  // Rank 0 runs B before F for the same microbatch: its B waits for the gradient from rank 1,
  // whose B waits for its own F, which waits for rank 0's F, which never runs.
  Timetable t = make_1f1b(2, 1);
  t.ops[0] = {{OpKind::kBackward, 0, 0}, {OpKind::kForward, 0, 0}};
  CHECK_THROWS_WITH_AS(
      replay_schedule(t, AbstractCosts{}),
      "the replay cannot finish: B(mb 0, stage 0) on rank 0 (replica 0) waits for F(mb 0, stage 0) on rank 0",
      SimulationError);
}

TEST_CASE("op times must be finite and positive, each named by its flag") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(replay_schedule(make_1f1b(2, 2), AbstractCosts{0, 1, 0, 0}),
                       "--f (forward time) is 0; expected a finite time > 0 and at most 1e+06", PlanError);
  CHECK_THROWS_WITH_AS(replay_schedule(make_1f1b(2, 2), AbstractCosts{inf, 1, 0, 0}),
                       "--f (forward time) is inf; expected a finite time > 0 and at most 1e+06", PlanError);
  CHECK_THROWS_WITH_AS(replay_schedule(make_1f1b(2, 2), AbstractCosts{1, 1, nan, 0}),
                       "--w (weight-gradient time) is nan; expected a finite time >= 0 and at most 1e+06", PlanError);
  CHECK_THROWS_WITH_AS(replay_schedule(make_1f1b(2, 2), AbstractCosts{1, 1, 0, nan}),
                       "--comm (transfer time) is nan; expected a finite time >= 0 and at most 1e+06", PlanError);
  CHECK_THROWS_WITH_AS(replay_schedule(make_1f1b(2, 2), AbstractCosts{1, 1, 0, 0, 0.5, inf}),
                       "--offload-time is inf; expected a finite time > 0 and at most 1e+06", PlanError);
  // 1e308 is finite, but a makespan of such ops is not.
  CHECK_THROWS_WITH_AS(replay_schedule(make_1f1b(2, 2), AbstractCosts{1e308, 1e308, 0, 0}),
                       "--f (forward time) is 1e+308; expected a finite time > 0 and at most 1e+06", PlanError);
}

TEST_CASE("the three bubble definitions on 1F1B") {
  // Rank 0 works from 0 to the makespan (m + p - 1)(F + B) and idles (p - 1)(F + B) of it: that
  // is both the longest span's idle share and the largest idle time of any rank.
  const int p = 4, m = 8;
  const double f = 1, b = 2;
  const ScheduleReplay r = replay_schedule(make_1f1b(p, m), AbstractCosts{f, b, 0, 0});
  check_exact(r.max_rank_idle, (p - 1) * (f + b), "max_rank_idle");
  check_exact(r.bubble_span_fraction, (p - 1.0) / (m + p - 1.0), "bubble_span_fraction");
}

TEST_CASE("ZB-H1 with F = B = W = 1: bubble (p - 1)(F + B - W) per rank") {
  // Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), section 3.1: ZB-H1's bubble is
  // (p - 1)(T_F + T_B - T_W), a third of 1F1B's (p - 1)(T_F + T_B + T_W) when all are equal.
  const int p = 8, m = 16;
  const ScheduleReplay r = replay_schedule(make_timetable("zb-h1", p, m, 1), AbstractCosts{1, 1, 1, 0});
  check_exact(r.max_rank_idle, (p - 1) * (1.0 + 1 - 1), "zb-h1 max_rank_idle");
  check_exact(r.makespan, 3.0 * m + (p - 1), "zb-h1 makespan");
}

TEST_CASE("PipeOffload: offloaded activations leave HBM and come back before their B") {
  // 1F1B, p = 4, m = 8, F = B = 1: rank 0 holds p = 4 activations without offload. Offloading every
  // activation with copies faster than an op (0.25 of a stage) leaves at most the one being
  // computed, the one reloading for the next B and the one still draining to the host on rank 0,
  // and costs no time: each reload runs during the op before its B.
  const Timetable t = make_1f1b(4, 8);
  const ScheduleReplay plain = replay_schedule(t, AbstractCosts{1, 1, 0, 0});
  AbstractCosts offloading{1, 1, 0, 0};
  offloading.offload_fraction = 1;
  offloading.offload = 0.25;
  const ScheduleReplay offloaded = replay_schedule(t, offloading);
  check_exact(offloaded.makespan, plain.makespan, "makespan with fast copies");
  CHECK(offloaded.peak_activations[0] < plain.peak_activations[0]);
  CHECK(offloaded.peak_activations[0] <= 3);
  // Copies slower than an op delay the backward that waits for its reload.
  offloading.offload = 3;
  CHECK(replay_schedule(t, offloading).makespan > plain.makespan);
  // A fraction outside [0, 1] is refused.
  offloading.offload_fraction = 1.5;
  CHECK_THROWS_WITH_AS(replay_schedule(t, offloading), "offload fraction 1.5 is outside [0, 1]", PlanError);
}

TEST_CASE("PipeOffload on every kind, overlapped DualPipe pairs included, always finishes") {
  // A B that closes an overlapped forward-backward pair cannot wait for a reload issued by the
  // pair's own forward: its reload starts with the op before the pair.
  AbstractCosts costs{1, 1, 1, 0};
  costs.offload = 0.25;
  for (const double fraction : {0.5, 1.0})
    for (const auto& kind_and_v : {std::pair<std::string, int>{"dualpipe", 2}, {"dualpipev", 2}, {"zb-v", 2},
                                   {"interleaved", 2}, {"zb-h2", 1}, {"1f1b", 1}}) {
      const auto& [kind, v] = kind_and_v;
      INFO(kind_and_v.first << " fraction " << fraction);
      costs.offload_fraction = fraction;
      const ScheduleReplay r = replay_schedule(make_timetable(kind, 4, 16, v), costs);
      CHECK(r.makespan > 0);
    }
}

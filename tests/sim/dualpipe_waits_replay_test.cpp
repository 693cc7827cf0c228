// The replay on a cluster waits where DeepSeek's DualPipe step() waits (dualpipe.py,
// dualpipev.py): an op behind a _commit_and_wait_comm waits for the receive posted ahead of it
// for a later forward (Timetable::early_receives), and an output sent after a later op leaves
// only when that op is done (Timetable::late_sends). With them the replay matches the abstract
// evaluator and the README's bubble, (PP/2-1)(F&B + B - 3W), on every rank.
#include <doctest/doctest.h>

#include <cstdio>

#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "sim/abstract_schedule.hpp"

using namespace hetsim;

namespace {

// Idle time of each rank within the replay's makespan.
std::vector<double> idle_per_rank(const ScheduleReplay& r) {
  std::vector<double> idle;
  for (const double fraction : r.bubble_fraction_per_rank) idle.push_back(fraction * r.makespan);
  return idle;
}

}  // namespace

TEST_CASE("dualpipev p=8, m=16, unit chunk ops: the replay waits as step() does") {
  // replay_schedule's times are a stage's (1/p of the model); a DualPipeV chunk is half of one,
  // so 2 gives every chunk op (F, b, w) 1 s. Free transfers; a pair runs its F and b back to
  // back (2 s). The README's F&B is a pair with its W (3 s), its B a whole backward (2 s): with
  // PP = 16 stages, (16/2 - 1)(3 + 2 - 3 x 1) = 14 s idle on every rank, busy 2m(F + b + w) = 96 s.
  const Timetable t = make_dualpipe_v(8, 16);
  const ScheduleReplay r = replay_schedule(t, AbstractCosts{2, 2, 2, 0});
  const TimetableTiming abstract = evaluate(t, UniformOpTimes{1, 1, 1, 0});
  std::printf("dualpipev p=8 m=16: replay makespan %g s (abstract %g s, README 96 + 14)\n",
              r.makespan, abstract.makespan_s);
  CHECK(r.makespan == doctest::Approx(abstract.makespan_s).epsilon(1e-12));
  CHECK(r.makespan == doctest::Approx(110.0).epsilon(1e-12));
  const auto idle = idle_per_rank(r);
  for (int rank = 0; rank < t.ranks; ++rank) {
    INFO("rank " << rank << ": replay idle " << idle[rank] << " s, abstract "
                 << abstract.bubble_s(rank) << " s, README 14 s");
    CHECK(idle[rank] == doctest::Approx(abstract.bubble_s(rank)).epsilon(1e-12));
    CHECK(idle[rank] == doctest::Approx(14.0).epsilon(1e-12));
  }
}

TEST_CASE("dualpipe and dualpipev: the replay matches the abstract schedule for any F, B, W") {
  // The README's F = b >= w shapes and others, with and without transfer time: every rank's
  // first start, last end and busy time agree with the evaluator, which applies step()'s
  // receives and sends (tests/schedules/dualpipe_test.cpp holds it to the formula).
  struct Times {
    double f, b, w, transfer;
  };
  for (const Times& c : {Times{1, 1, 1, 0}, Times{2, 1, 0.5, 0}, Times{1, 1.5, 0.25, 0},
                         Times{1, 1, 1, 0.1}, Times{1.5, 2, 1, 0.3}})
    for (const int p : {2, 4, 8})
      for (const int m : {2 * p, 3 * p + 2}) {
        const Timetable dual = make_dualpipe(p, m);
        const Timetable dual_v = make_dualpipe_v(p, m);
        // DualPipe's chunks are whole stages (its two paths each visit p), DualPipeV's halves.
        for (const auto& timetable_and_scale :
             {std::pair<const Timetable&, double>{dual, 1.0}, {dual_v, 2.0}}) {
          const Timetable& t = timetable_and_scale.first;
          const double scale = timetable_and_scale.second;
          INFO(t.kind << " p=" << p << " m=" << m << " F=" << c.f << " b=" << c.b << " w=" << c.w
                      << " transfer=" << c.transfer);
          const ScheduleReplay r =
              replay_schedule(t, AbstractCosts{c.f * scale, c.b * scale, c.w * scale, c.transfer});
          const TimetableTiming abstract = evaluate(t, UniformOpTimes{c.f, c.b, c.w, c.transfer});
          CHECK(r.makespan == doctest::Approx(abstract.makespan_s).epsilon(1e-12));
          const auto idle = idle_per_rank(r);
          for (int rank = 0; rank < t.ranks; ++rank)
            CHECK(idle[rank] == doctest::Approx(abstract.bubble_s(rank)).epsilon(1e-9));
        }
      }
}

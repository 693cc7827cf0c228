// Seq1F1B (Sun et al., NAACL 2025) in the order of the zero-bubble repository's seq1f1b
// scheduler: 1F1B over m*k sequence segments, warm-up p-r-1 + k-1, backwards last segment first.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("seq1f1b p=2, m=2, k=2: segments i*k+j, backwards from the last segment") {
  // Rank 0 warms up p-1 + k-1 = 2 segments (0, 1 = mb 0), rank 1 one; B order 1, 0, 3, 2.
  const auto t = hetsim::make_seq1f1b(2, 2, 2);
  CHECK(t.microbatches == 4);
  CHECK(t.sequence_splits == 2);
  CHECK(orders_of(t) == std::vector<std::string>{"F0 F1 F2 B1 F3 B0 B3 B2",
                                                 "F0 F1 B1 F2 B0 F3 B3 B2"});
  hetsim::validate(t);
}

TEST_CASE("seq1f1b validates over a grid; the validator enforces segment order") {
  for (int p = 1; p <= 6; ++p)
    for (int m = 1; m <= 8; ++m)
      for (int k = 1; k <= 4; ++k) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(k);
        CHECK_NOTHROW(hetsim::validate(hetsim::make_seq1f1b(p, m, k)));
      }
  auto t = hetsim::make_seq1f1b(2, 2, 2);
  std::swap(t.ops[1][0], t.ops[1][1]);  // F1 (mb 0 segment 1) before F0 on rank 1
  CHECK(error_text<hetsim::ScheduleError>([&] { hetsim::validate(t); }) ==
        "timetable 'seq1f1b': F(mb 0 segment 1, stage 1) on rank 1 at position 0 is scheduled "
        "before F(mb 0 segment 0, stage 1) on rank 1 at position 1, which it depends on");
}

TEST_CASE("seq1f1b bubble: (p-1)(t_F + t_B)/k with segments of 1/k the time") {
  // Sun et al. 2025, Sec. 3: splitting the sequence into k segments shrinks 1F1B's bubble
  // (p-1)(t_F + t_B) by k; iteration m(t_F + t_B) + (p-1)(t_F + t_B)/k, with t_F = 1, t_B = 2.
  for (int p = 2; p <= 8; ++p)
    for (int m = p; m <= 2 * p; ++m)
      for (int k = 1; k <= 4; ++k) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(k);
        const auto timing =
            hetsim::evaluate(hetsim::make_seq1f1b(p, m, k), {1.0 / k, 2.0 / k, 0.0, 0.0});
        CHECK(std::fabs(timing.makespan_s - (3.0 * m + (p - 1) * 3.0 / k)) < 1e-9);
      }
}

TEST_CASE("seq1f1b peak activations: p-r+k-1 segments, (p-r+k-1)/k microbatches") {
  // Warm-up p-r-1 + k-1 forwards plus one before the first backward.
  for (int p = 1; p <= 8; ++p)
    for (int k = 1; k <= 4; ++k) {
      const auto peaks = hetsim::peak_activations(hetsim::make_seq1f1b(p, 3 * p, k),
                                                  hetsim::ActivationRelease::kAtBackward);
      for (int r = 0; r < p; ++r) CHECK(peaks[r] == p - r + k - 1);
    }
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_seq1f1b(4, 8, 0); }) ==
        "seq1f1b: sequence splits k must be >= 1 (got 0)");
}

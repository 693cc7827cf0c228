// ZB-V (Qi et al., ICLR 2024, Sec. 6) in the order of PyTorch's ScheduleZBVZeroBubble
// (_calculate_single_rank_operations): V placement, split backward, zero bubble for m >= 2p.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("zb-v p=2, m=4: PyTorch's order, traced by hand") {
  // Rank 0: warm-up 2p-1 = 3 F on chunk 0, no (F1, F0) pairs, p = 2 triples (F B W) on chunk 1;
  // steady rounds (F0 if any, B0 W0, F1 B1 W1); cool-down p = 2 pairs (B0, oldest W0).
  // Rank 1: 1 F0; 1 pair (F1, F0); 1 triple; steady; cool-down (B0, B1), (B0, W0), then W1, W0.
  const auto t = hetsim::make_zb_v(2, 4);
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0, 3}, {1, 2}});
  CHECK(t.split_backward);
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B2.1 "
                            "W2.1 B1.0 W1.0 F3.1 B3.1 W3.1 B2.0 W2.0 B3.0 W3.0",
                            "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 F2.0 B0.0 W0.0 F2.1 B1.1 W1.1 F3.0 B1.0 "
                            "W1.0 F3.1 B2.1 W2.1 B2.0 B3.1 B3.0 W2.0 W3.1 W3.0",
                        });
}

TEST_CASE("zb-v with m < 2p-1 drops the padding microbatches as PyTorch does") {
  // PyTorch builds the order for max(2p-1, m) = 5 microbatches and blanks ops of mb >= m = 2.
  const auto t = hetsim::make_zb_v(3, 2);
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0.0 F1.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 B0.0 W0.0 B1.0 W1.0",
                            "F0.0 F1.0 F0.1 F1.1 B0.1 W0.1 B1.1 W1.1 B0.0 W0.0 B1.0 W1.0",
                            "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 B0.0 W0.0 B1.1 W1.1 B1.0 W1.0",
                        });
  hetsim::validate(t);
}

TEST_CASE("zb-v validates over a grid and keeps PyTorch's warm-up shape") {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 4 * p + 3; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto t = hetsim::make_zb_v(p, m);
      REQUIRE_NOTHROW(hetsim::validate(t));
      for (int r = 0; r < p; ++r) {
        // First min(2(p-r)-1, m) ops of rank r: chunk-0 forwards of microbatches 0, 1, ...
        const int warm = std::min(2 * (p - r) - 1, m);
        for (int i = 0; i < warm; ++i)
          CHECK(t.ops[r][i] == hetsim::ScheduledOp{hetsim::OpKind::kForward, i, 0});
      }
    }
}

TEST_CASE("zb-v has zero bubble over the longest single-rank span for m >= 2p") {
  // Qi et al. 2024, Sec. 6: with t_F = t_B = t_W (chunk times) and free communication, every
  // rank is busy from its first op to its last: span = busy = 2m(t_F + t_B + t_W) = 6m.
  for (int p = 2; p <= 8; ++p)
    for (int m = 2 * p; m <= 4 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto timing = hetsim::evaluate(hetsim::make_zb_v(p, m), {1.0, 1.0, 1.0, 0.0});
      for (int r = 0; r < p; ++r) CHECK(std::fabs(timing.span_bubble_s(r)) < 1e-9);
      CHECK(std::fabs(timing.longest_span_s() - 6.0 * m) < 1e-9);
    }
}

TEST_CASE("zb-v holds 1F1B's peak activations: 2p chunk activations = p stage microbatches") {
  // Qi et al. 2024, Sec. 6: ZB-V's peak memory equals 1F1B's (p microbatches of one stage);
  // each chunk is half a stage, so 2p chunk activations, counted +1 at F and -1 at W.
  for (int p = 2; p <= 8; ++p) {
    const auto peaks =
        hetsim::peak_activations(hetsim::make_zb_v(p, 3 * p), hetsim::ActivationRelease::kAtWeight);
    for (int r = 0; r < p; ++r) CHECK(peaks[r] == 2 * p);
  }
}

TEST_CASE("zb-v by name needs two chunks, as PyTorch's ZBV requires two stages per rank") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_timetable("zb-v", 4, 8, 3); }) ==
        "zb-v: chunks per rank v must be 2 (got 3); the V and the two directions put two chunks "
        "on each rank");
  CHECK(hetsim::make_timetable("zb-v", 4, 8, 2).ops == hetsim::make_zb_v(4, 8).ops);
}

// ZB-H2 (Qi et al., ICLR 2024, Sec. 3.2, Fig. 3 bottom): extra warm-up forwards, W's deferred
// to the tail, zero bubble over every rank's span for m >= 2p with t_F = t_B = t_W.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("zb-h2 p=3, m=6: warm-up 2(p-r)-1, (B, W, F) rounds, then the tail") {
  // By hand: m-2p+1 = 1 steady (B, W, F) round; the last 2p-2 = 4 B's come 2t apart, rank r
  // puts its 2r remaining F's between the first of them and W's between the rest; the
  // 2r+1 deferred W's end the list.
  const auto t = hetsim::make_zb_h2(3, 6);
  CHECK(t.split_backward);
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0 F1 F2 F3 F4 B0 W0 F5 B1 W1 B2 W2 B3 W3 B4 W4 B5 W5",
                            "F0 F1 F2 B0 W0 F3 B1 F4 B2 F5 B3 W1 B4 W2 B5 W3 W4 W5",
                            "F0 B0 W0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 W1 W2 W3 W4 W5",
                        });
  hetsim::validate(t);
}

TEST_CASE("zb-h2 validates over a grid, m < 2p included") {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 4 * p + 2; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      CHECK_NOTHROW(hetsim::validate(hetsim::make_zb_h2(p, m)));
    }
}

TEST_CASE("zb-h2 has zero bubble over each rank's span: the paper's (p-1)(t_F+t_B-2t_W) = 0") {
  // Qi et al. 2024, Sec. 3.2 and Table 2: ZB-H2's bubble is (p-1)(t_F + t_B - 2t_W), zero for
  // t_F = t_B = t_W = 1 s, so the longest single-rank span is m(t_F + t_B + t_W) = 3m s. The
  // parallelogram staggers the starts by t_F per rank: makespan 3m + (p-1) s, the same as
  // ZB-H1's, whose longest span keeps (p-1)(t_F + t_B - t_W) = p-1 s of bubble.
  for (int p = 2; p <= 8; ++p)
    for (const int m : {2 * p, 3 * p, 4 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto timing = hetsim::evaluate(hetsim::make_zb_h2(p, m), {1.0, 1.0, 1.0, 0.0});
      for (int r = 0; r < p; ++r) {
        CAPTURE(r);
        CHECK(std::fabs(timing.span_bubble_s(r)) < 1e-9);
        CHECK(std::fabs(timing.start_s[r] - r) < 1e-9);
      }
      const double span = 3.0 * m + (p - 1) * (1.0 + 1.0 - 2.0 * 1.0);
      CHECK(std::fabs(timing.longest_span_s() - span) / span < 1e-9);
      CHECK(std::fabs(timing.makespan_s - (3.0 * m + p - 1)) < 1e-9);
      const auto h1 = hetsim::evaluate(hetsim::make_zb_h1(p, m), {1.0, 1.0, 1.0, 0.0});
      CHECK(std::fabs(h1.longest_span_s() - (3.0 * m + p - 1)) < 1e-9);
    }
  const auto t = hetsim::evaluate(hetsim::make_zb_h2(4, 8), {1.0, 1.0, 1.0, 0.0});
  std::printf(
      "zb-h2 p=4 m=8, t_F=t_B=t_W=1 s: longest span expected 24 s, got %g s; "
      "makespan expected 27 s, got %g s\n",
      t.longest_span_s(), t.makespan_s);
}

TEST_CASE("zb-h2 holds 2p-1 microbatches of activations, on the first rank at its warm-up") {
  // Qi et al. 2024, Sec. 3.2: peak (2p-1)M_B, against 1F1B's pM_B; counted +1 at F, -1 at W.
  for (int p = 2; p <= 8; ++p)
    for (const int m : {2 * p, 3 * p, 4 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto t = hetsim::make_zb_h2(p, m);
      const auto peaks = hetsim::peak_activations(t, hetsim::ActivationRelease::kAtWeight);
      CHECK(peaks[0] == 2 * p - 1);
      CHECK(*std::max_element(peaks.begin(), peaks.end()) == 2 * p - 1);
      // Rank 0's warm-up alone: 2p-1 forwards before its first B.
      for (int i = 0; i < 2 * p - 1; ++i)
        CHECK(t.ops[0][i] == hetsim::ScheduledOp{hetsim::OpKind::kForward, i, 0});
      CHECK(t.ops[0][2 * p - 1].kind == hetsim::OpKind::kBackward);
    }
}

TEST_CASE("zb-h2 bad arguments and by name") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_zb_h2(0, 8); }) ==
        "zb-h2: pipeline ranks p must be >= 1 (got 0)");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_zb_h2(4, 0); }) ==
        "zb-h2: microbatches m must be >= 1 (got 0)");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_timetable("zb-h2", 4, 8, 2); }) ==
        "zb-h2: chunks per rank v must be 1 (got 2)");
  CHECK(hetsim::make_timetable("zb-h2", 4, 8, 1).ops == hetsim::make_zb_h2(4, 8).ops);
}

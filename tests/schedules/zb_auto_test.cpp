// zb-auto (Qi et al., ICLR 2024, Sec. 3.1 heuristic): the heuristic's 8 runs and the
// handcrafted schedules under a memory limit, the best by longest single-rank span.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"
#include "schedules/zb_auto.hpp"

using hetsim::testing::error_text;

namespace {

int busiest(const hetsim::Timetable& t) {
  const auto peaks = hetsim::peak_activations(t, hetsim::ActivationRelease::kAtWeight);
  return *std::max_element(peaks.begin(), peaks.end());
}

const hetsim::UniformOpTimes kTimes[] = {
    {1.0, 1.0, 1.0, 0.0}, {1.0, 2.0, 1.0, 0.0}, {1.0, 1.5, 0.5, 0.1}};

}  // namespace

TEST_CASE("zb-auto is never worse than zb-h1 at zb-h1's memory (p microbatches)") {
  // ZB-H1 (Sec. 3.1) holds p microbatches on rank 0; with the same limit the search must do at
  // least as well over the longest single-rank span, for several t_F : t_B : t_W and T_comm.
  for (const auto& tm : kTimes)
    for (int p = 2; p <= 7; ++p)
      for (const int m : {p, 2 * p, 3 * p}) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(tm.backward_s);
        const hetsim::ZbAutoOptions o{tm.forward_s, tm.backward_s, tm.weight_s, tm.transfer_s, p};
        const auto t = hetsim::make_zb_auto(p, m, o);
        CHECK(t.kind == "zb-auto");
        CHECK(busiest(t) <= p);
        const double auto_s = hetsim::evaluate(t, tm).longest_span_s();
        const double h1_s = hetsim::evaluate(hetsim::make_zb_h1(p, m), tm).longest_span_s();
        CHECK(auto_s <= h1_s + 1e-9);
      }
  const hetsim::UniformOpTimes tm{1.0, 1.5, 0.5, 0.1};
  std::printf(
      "p=6 m=6 t_F=1 t_B=1.5 t_W=0.5 T_comm=0.1 s, limit 6: longest span zb-h1 %g s, "
      "zb-auto %g s\n",
      hetsim::evaluate(hetsim::make_zb_h1(6, 6), tm).longest_span_s(),
      hetsim::evaluate(hetsim::make_zb_auto(6, 6, {1.0, 1.5, 0.5, 0.1, 6}), tm).longest_span_s());
}

TEST_CASE("zb-auto reaches zero span bubble at 2p-1 microbatches where zb-h2 does") {
  // Qi et al. 2024, Sec. 3.2: at (2p-1)M_B and t_F = t_B = t_W the bubble is
  // (p-1)(t_F+t_B-2t_W) = 0: every rank busy from first op to last, span 3m s.
  for (int p = 2; p <= 8; ++p)
    for (const int m : {2 * p, 3 * p, 4 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto t = hetsim::make_timetable("zb-auto", p, m, 1);
      const auto timing = hetsim::evaluate(t, {1.0, 1.0, 1.0, 0.0});
      for (int r = 0; r < p; ++r) CHECK(std::fabs(timing.span_bubble_s(r)) < 1e-9);
      CHECK(std::fabs(timing.longest_span_s() - 3.0 * m) / (3.0 * m) < 1e-9);
      CHECK(busiest(t) <= 2 * p - 1);
    }
}

TEST_CASE("zb-auto respects every memory limit and does better with more memory") {
  for (const auto& tm : kTimes)
    for (int p = 2; p <= 6; ++p) {
      const int m = 3 * p;
      double previous = 1e300;
      for (int limit = 1; limit <= 2 * p + 1; ++limit) {
        CAPTURE(p);
        CAPTURE(limit);
        const auto t = hetsim::make_zb_auto(
            p, m, {tm.forward_s, tm.backward_s, tm.weight_s, tm.transfer_s, limit});
        CHECK_NOTHROW(hetsim::validate(t));
        CHECK(busiest(t) <= limit);
        const double span = hetsim::evaluate(t, tm).longest_span_s();
        CHECK(span <= previous + 1e-9);  // a larger limit admits every smaller one's candidates
        previous = std::min(previous, span);
      }
    }
}

TEST_CASE("zb-auto by name: unit times, free transfers, 2p-1 microbatches") {
  CHECK(hetsim::make_timetable("zb-auto", 4, 8, 1).ops ==
        hetsim::make_zb_auto(4, 8, {1.0, 1.0, 1.0, 0.0, 7}).ops);
  CHECK(hetsim::make_zb_auto(4, 8, {}).ops ==
        hetsim::make_zb_auto(4, 8, {1.0, 1.0, 1.0, 0.0, 7}).ops);
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_timetable("zb-auto", 4, 8, 2); }) ==
        "zb-auto: chunks per rank v must be 1 (got 2)");
}

TEST_CASE("zb-auto bad arguments name the constraint and a value that satisfies it") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_zb_auto(0, 8, {}); }) ==
        "zb-auto: pipeline ranks p must be >= 1 (got 0)");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_zb_auto(4, 0, {}); }) ==
        "zb-auto: microbatches m must be >= 1 (got 0)");
  CHECK(error_text<hetsim::PlanError>([] {
          hetsim::make_zb_auto(4, 8, {0.0, 1.0, 1.0, 0.0, 0});
        }) == "zb-auto: forward time t_F must be > 0 (got 0), e.g. 1");
  CHECK(error_text<hetsim::PlanError>([] {
          hetsim::make_zb_auto(4, 8, {1.0, -1.0, 1.0, 0.0, 0});
        }) == "zb-auto: backward time t_B must be > 0 (got -1), e.g. 1");
  CHECK(error_text<hetsim::PlanError>([] {
          hetsim::make_zb_auto(4, 8, {1.0, 1.0, 0.0, 0.0, 0});
        }) == "zb-auto: weight-gradient time t_W must be > 0 (got 0), e.g. 1");
  CHECK(error_text<hetsim::PlanError>([] {
          hetsim::make_zb_auto(4, 8, {1.0, 1.0, 1.0, -0.5, 0});
        }) == "zb-auto: transfer time must be >= 0 (got -0.5), e.g. 0");
  CHECK(error_text<hetsim::PlanError>([] {
          hetsim::make_zb_auto(4, 8, {1.0, 1.0, 1.0, 0.0, -1});
        }) == "zb-auto: memory limit must be >= 1 microbatch, or 0 for 2p-1 = 7 (got -1)");
  CHECK(error_text<hetsim::PlanError>([] {
          hetsim::make_zb_auto(4, 8, {1.0, 1.0, 1.0, 0.0, 8, 1.5});
        }) == "zb-auto: weight memory share M_W/M_B must be in [0, 1] (got 1.5), e.g. 1");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_zb_auto(256, 2048, {}); }) ==
        "zb-auto: p x m = 256 x 2048 needs 12582912 op placements, above the search bound of "
        "8000000 (seconds of search); use fewer microbatches or a fixed schedule such as zb-h2");
}

TEST_CASE("zb-auto keeps the memory limit with W holding only part of the activations") {
  // F adds 1 M_B, B frees 1 - share, W the share (Qi et al. Table 1): with share 0.37 (the
  // 1.5B model, 32h / (34h + 5as)) every rank stays within the limit, counted that way, for
  // limits from 1 to 2p; a smaller share frees memory earlier, so more F's fit a limit.
  const double share = 0.37;
  for (int p = 2; p <= 6; ++p)
    for (int limit = 1; limit <= 2 * p; ++limit) {
      CAPTURE(p);
      CAPTURE(limit);
      const auto t = hetsim::make_zb_auto(p, 3 * p, {1.0, 1.0, 0.5, 0.05, limit, share});
      CHECK_NOTHROW(hetsim::validate(t));
      for (const auto& ops : t.ops) {
        double memory = 0.0;
        for (const auto& op : ops) {
          memory += op.kind == hetsim::OpKind::kForward    ? 1.0
                    : op.kind == hetsim::OpKind::kBackward ? -(1.0 - share)
                                                           : -share;
          CHECK(memory <= limit + 1e-9);
        }
      }
    }
}

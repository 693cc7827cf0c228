// DualPipe and DualPipeV in the order of DeepSeek's step() (github.com/deepseek-ai/DualPipe,
// dualpipe.py, dualpipev.py), checked against the table in that repository's README:
//   DualPipe   bubble (PP/2-1)(F&B + B - 3W), parameters 2x, activations PP+1, PP devices
//   DualPipeV  bubble (PP/2-1)(F&B + B - 3W), parameters 2x, activations PP+1, PP/2 devices
// PP counts pipeline stages of one direction (DualPipe: p ranks; DualPipeV: 2p stages on p
// ranks), B is a whole backward chunk, W its weight part, F&B an overlapped pair.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("dualpipe p=4, m=8: step()'s eight steps traced by hand") {
  // Rank 0 (half_rank 0 of 2, 4 microbatches a direction): step 1 two F0; step 2 (F0, F1);
  // step 3 (B1 W1 F1); step 4 one round (F0 B1 | F1 B0), whole backwards; step 5 (B1, F1 B0);
  // step 6 (B1 whole, then B0 with its W deferred); step 7 (W, B0 deferred); step 8 W.
  // Chunk 1 carries the reverse direction's microbatches, numbered 4..7.
  const auto t = hetsim::make_dualpipe(4, 8);
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0, 7}, {1, 6}, {2, 5}, {3, 4}});
  CHECK(t.paths == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(t.path_of_microbatch == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(orders_of(t) ==
        std::vector<std::string>{
            "F0.0 F1.0 F2.0 F4.1 B4.1 W4.1 F5.1 F3.0 B5.1 W5.1 F6.1 B0.0 W0.0 B6.1 W6.1 F7.1 B1.0 "
            "W1.0 B7.1 W7.1 B2.0 W2.0 B3.0 W3.0",
            "F0.0 F4.1 F1.0 F5.1 F2.0 B4.1 W4.1 F6.1 B0.0 W0.0 F3.0 B5.1 W5.1 F7.1 B1.0 W1.0 B6.1 "
            "W6.1 B2.0 W2.0 B7.1 B3.0 W7.1 W3.0",
            "F4.1 F0.0 F5.1 F1.0 F6.1 B0.0 W0.0 F2.0 B4.1 W4.1 F7.1 B1.0 W1.0 F3.0 B5.1 W5.1 B2.0 "
            "W2.0 B6.1 W6.1 B3.0 B7.1 W3.0 W7.1",
            "F4.1 F5.1 F6.1 F0.0 B0.0 W0.0 F1.0 F7.1 B1.0 W1.0 F2.0 B4.1 W4.1 B2.0 W2.0 F3.0 B5.1 "
            "W5.1 B3.0 W3.0 B6.1 W6.1 B7.1 W7.1",
        });
  // Overlapped pairs (position of the F): rank 0 has step 4's two, (F3.0 B5.1) and
  // (F6.1 B0.0), and step 5's (F7.1 B1.0); the middle rank 1 runs step 4's first (F2.0 B4.1)
  // apart, as step() does, and overlaps the other three.
  CHECK(t.overlapped_pairs[0] == std::vector<int>{7, 10, 15});
  CHECK(t.overlapped_pairs[1] == std::vector<int>{7, 10, 13});
  hetsim::validate(t);
}

TEST_CASE("dualpipev p=2, m=4: step()'s eight steps traced by hand") {
  // Rank 1 (the last): step 2 two (F0, F1); step 4 two rounds (F0 B1 | F1 B0); step 6 with the
  // second round's backwards deferred (rank odd: B1 switches first); step 8 two W.
  const auto t = hetsim::make_dualpipe_v(2, 4);
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0, 3}, {1, 2}});
  CHECK(t.paths.empty());
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 F3.0 B1.1 W1.1 F2.1 B0.0 W0.0 B2.1 "
                            "W2.1 F3.1 B1.0 W1.0 B3.1 W3.1 B2.0 W2.0 B3.0 W3.0",
                            "F0.0 F0.1 F1.0 F1.1 F2.0 B0.1 W0.1 F2.1 B0.0 W0.0 F3.0 B1.1 W1.1 F3.1 "
                            "B1.0 W1.0 B2.1 W2.1 B2.0 W2.0 B3.1 B3.0 W3.1 W3.0",
                        });
  hetsim::validate(t);
}

TEST_CASE("dualpipe and dualpipev validate over the grid step() accepts") {
  for (int p = 2; p <= 12; p += 2)
    for (int m = 2 * p; m <= 4 * p + 2; m += 2) {
      CAPTURE(p);
      CAPTURE(m);
      CHECK_NOTHROW(hetsim::validate(hetsim::make_dualpipe(p, m)));
    }
  for (int p = 1; p <= 9; ++p)
    for (int m = 2 * p; m <= 4 * p + 1; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      CHECK_NOTHROW(hetsim::validate(hetsim::make_dualpipe_v(p, m)));
    }
}

TEST_CASE("dualpipe and dualpipev reject what step() asserts against") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_dualpipe(5, 20); }) ==
        "dualpipe needs an even p (got 5); p = 6 would do");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_dualpipe(4, 6); }) ==
        "dualpipe needs an even m >= 2p = 8 (got m = 6); m = 8 would do");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_dualpipe(4, 11); }) ==
        "dualpipe needs an even m >= 2p = 8 (got m = 11); m = 12 would do");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_dualpipe(0, 8); }) ==
        "dualpipe: pipeline ranks p must be >= 2 (got 0)");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_dualpipe_v(4, 7); }) ==
        "dualpipev needs m >= 2p = 8 (got m = 7); m = 8 would do");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_timetable("dualpipe", 4, 8, 1); }) ==
        "dualpipe: chunks per rank v must be 2 (got 1); the V and the two directions put two "
        "chunks on each rank");
  CHECK_NOTHROW(hetsim::make_dualpipe_v(3, 6));  // DualPipeV takes an odd p
}

namespace {

// Per-rank idle time over the makespan of `t` under `times`.
std::vector<double> bubbles(const hetsim::Timetable& t, const hetsim::UniformOpTimes& times) {
  const auto timing = hetsim::evaluate(t, times);
  std::vector<double> out;
  for (int r = 0; r < t.ranks; ++r) out.push_back(timing.bubble_s(r));
  return out;
}

// The README's bubble (PP/2-1)(F&B + B - 3W) in the evaluator's terms: B there is the whole
// backward (input part b + weight part w) and F&B an overlapped pair, which here is the pair's
// F and input part (pair_s) followed by its W, so F&B + B - 3W = pair_s + b - w.
double readme_bubble(int pp, double pair_s, double b, double w) {
  return (pp / 2 - 1) * (pair_s + b - w);
}

}  // namespace

TEST_CASE("dualpipev p=8, m=16, unit ops: step()'s early receives and late sends") {
  // F = b = w = 1 per chunk op, no overlap gain (pair 2), free transfers: the README gives
  // (PP/2-1)(F&B + B - 3W) = (16/2-1)(3 + 2 - 3) = 14 on every rank (PP = 16 stages). Step 3's
  // weight step commits the receive of the F1 after it and step 2's F1 that of the next F0
  // (_recv_forward before _commit_and_wait_comm in dualpipev.py); whole backwards send after
  // their weight gradients, step-2 F0's after the F1 beside them, and the last rank's last
  // step-2 F1 after step 4's first F0. Running every op as soon as its own inputs are done
  // gives 7.
  hetsim::UniformOpTimes times{1.0, 1.0, 1.0, 0.0};
  const auto t = hetsim::make_dualpipe_v(8, 16);
  const auto got = bubbles(t, times);
  for (int r = 0; r < 8; ++r) {
    INFO("rank " << r << ": expected 14 s of bubble, got " << got[r] << " s");
    CHECK(got[r] == doctest::Approx(14.0).epsilon(1e-12));
  }
}

TEST_CASE("dualpipe and dualpipev bubble: the README's (PP/2-1)(F&B + B - 3W)") {
  // The README's figure draws a forward and an input backward the same length and a weight
  // step no longer; with those (F = b >= w, any values) the evaluator, with step()'s early
  // receives and late sends, gives the formula exactly. Without overlap gain every rank
  // gets it; with a gain (pair < F + b) the ranks differ by how many pairs they run and the
  // formula is the largest. Rank busy time: DualPipe m(F + b + w); DualPipeV 2m(F + b + w).
  struct Times {
    double f, w, pair;
  };
  for (const Times& c : {Times{1, 1, 2}, Times{2, 1, 4}, Times{3, 1, 6}, Times{1, 0.5, 2},
                         Times{2, 1.5, 4}, Times{1, 1, 1.5}, Times{2, 1, 3}}) {
    hetsim::UniformOpTimes times{c.f, c.f, c.w, 0.0};
    times.overlapped_s = c.pair;
    const bool gain = c.pair < 2 * c.f;
    const auto check = [&](const hetsim::Timetable& t, int pp, double busy) {
      const auto timing = hetsim::evaluate(t, times);
      const double expected = readme_bubble(pp, c.pair, c.f, c.w);
      double worst = 0.0;
      for (int r = 0; r < t.ranks; ++r) {
        worst = std::max(worst, timing.bubble_s(r));
        if (gain) continue;
        INFO(t.kind << " p=" << t.ranks << " m=" << t.microbatches << " F=b=" << c.f
                    << " w=" << c.w << " rank " << r << ": expected " << expected
                    << " s of bubble, got " << timing.bubble_s(r) << " s");
        CHECK(timing.busy_s[r] == doctest::Approx(busy).epsilon(1e-12));
        CHECK(timing.bubble_s(r) == doctest::Approx(expected).epsilon(1e-12));
      }
      INFO(t.kind << " p=" << t.ranks << " m=" << t.microbatches << " F=b=" << c.f << " w=" << c.w
                  << " pair=" << c.pair << ": expected " << expected
                  << " s of bubble on the idlest rank, got " << worst << " s");
      CHECK(worst == doctest::Approx(expected).epsilon(1e-12));
    };
    for (int p = 2; p <= 12; p += 2)
      for (const int m : {2 * p, 3 * p, 4 * p + 2})
        check(hetsim::make_dualpipe(p, m), p, m * (2 * c.f + c.w));  // PP = p
    for (int p = 1; p <= 8; ++p)
      for (const int m : {2 * p, 3 * p + 1})
        check(hetsim::make_dualpipe_v(p, m), 2 * p, 2 * m * (2 * c.f + c.w));  // PP = 2p
  }
}

TEST_CASE("dualpipe and dualpipev activations: PP+1 chunk activations per device") {
  // README table, activation per device PP+1, in microbatch-chunks (one microbatch through one
  // 1/PP slice of the model), counted +1 at F and -1 at W (the backward is freed with its W).
  for (int p = 2; p <= 12; p += 2) {
    const auto peaks = hetsim::peak_activations(hetsim::make_dualpipe(p, 3 * p),
                                                hetsim::ActivationRelease::kAtWeight);
    for (int r = 0; r < p; ++r) CHECK(peaks[r] == p + 1);
  }
  for (int p = 1; p <= 8; ++p) {
    const auto peaks = hetsim::peak_activations(hetsim::make_dualpipe_v(p, 3 * p),
                                                hetsim::ActivationRelease::kAtWeight);
    for (int r = 0; r < p; ++r) CHECK(peaks[r] == 2 * p + 1);
  }
}

TEST_CASE("dualpipe and dualpipev parameters: two 1/PP slices per device (2x)") {
  // README table, parameter per device 2x that of 1F1B over PP stages (1/PP of the model):
  // every rank holds two different slices (path positions) of a PP-stage path.
  for (int p = 2; p <= 8; p += 2) {
    const auto t = hetsim::make_dualpipe(p, 2 * p);
    for (int r = 0; r < p; ++r) {
      const int forward_slice = hetsim::path_position(t, 0, t.stage(r, 0));
      const int reverse_slice = hetsim::path_position(t, p, t.stage(r, 1));  // mb p: path 1
      CHECK(forward_slice == r);
      CHECK(reverse_slice == p - 1 - r);
      CHECK(static_cast<int>(hetsim::path_stages(t, 0).size()) == p);
    }
    // Half the microbatches each way, as DeepSeek scatters m/2 at each end.
    CHECK(hetsim::previous_stage(t, p, p) == -1);
    CHECK(hetsim::next_stage(t, 0, p - 1) == -1);
    CHECK(hetsim::next_stage(t, p, p) == p + 1);
  }
  for (int p = 1; p <= 6; ++p) {
    const auto t = hetsim::make_dualpipe_v(p, 2 * p);
    std::set<int> slices;
    for (int r = 0; r < p; ++r) {
      const int a = hetsim::path_position(t, 0, t.stage(r, 0));
      const int b = hetsim::path_position(t, 0, t.stage(r, 1));
      CHECK(a != b);
      slices.insert(a);
      slices.insert(b);
    }
    CHECK(static_cast<int>(slices.size()) == 2 * p);  // PP = 2p slices, two per device
  }
}

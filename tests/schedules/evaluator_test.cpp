// The uniform-time evaluator against published closed forms (equal stage times, free transfers).
#include <doctest/doctest.h>

#include <cmath>

#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"

using hetsim::UniformOpTimes;

namespace {
bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }
}  // namespace

TEST_CASE("gpipe and 1f1b take (m + p - 1)(t_f + t_b)") {
  // Huang et al. 2019 Sec. 2.3; Narayanan et al. SC'21 Sec. 2.2.1: bubble (p-1)(t_f + t_b),
  // so the iteration is m(t_f + t_b) + (p-1)(t_f + t_b).
  const UniformOpTimes times{1.0, 2.0, 0.0, 0.0};
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 16; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const double expected = (m + p - 1) * 3.0;
      CHECK(close(hetsim::evaluate(hetsim::make_1f1b(p, m), times).makespan_s, expected));
      CHECK(close(hetsim::evaluate(hetsim::make_gpipe(p, m), times).makespan_s, expected));
    }
}

TEST_CASE("one microbatch crosses 2(p-1) transfers") {
  // With m = 1 every op is on the critical path: p(t_f + t_b) + 2(p-1)c.
  for (int p = 1; p <= 6; ++p) {
    const auto timing = hetsim::evaluate(hetsim::make_1f1b(p, 1), {1.0, 2.0, 0.0, 0.25});
    CHECK(close(timing.makespan_s, p * 3.0 + 2 * (p - 1) * 0.25));
  }
}

TEST_CASE("interleaved 1f1b shrinks the bubble by v") {
  // Narayanan et al. SC'21 Sec. 2.2.2: with chunk times t_f/v and t_b/v the bubble is
  // (p-1)(t_f + t_b)/v, so the iteration is m(t_f + t_b) + (p-1)(t_f + t_b)/v (m a multiple of p).
  for (int p = 2; p <= 6; ++p)
    for (int v = 2; v <= 4; ++v)
      for (int m = p; m <= 4 * p; m += p) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const UniformOpTimes times{1.0 / v, 1.0 / v, 0.0, 0.0};
        const double expected = m * 2.0 + (p - 1) * 2.0 / v;
        CHECK(close(hetsim::evaluate(hetsim::make_interleaved(p, m, v), times).makespan_s, expected));
      }
}

TEST_CASE("busy and bubble time per rank") {
  const auto timing = hetsim::evaluate(hetsim::make_1f1b(4, 8), {1.0, 2.0, 0.0, 0.0});
  CHECK(close(timing.busy_s[2], 24.0));
  CHECK(close(timing.bubble_s(2), 9.0));  // (p-1)(t_f + t_b) = 3 * 3 s on every rank
}

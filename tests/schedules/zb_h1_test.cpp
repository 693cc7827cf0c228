// ZB-H1 (Qi et al., ICLR 2024, Sec. 3.1): split backward, deferred W, 1F1B's in-flight count.
#include <doctest/doctest.h>

#include <cmath>

#include "schedule_test_support.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::orders_of;

TEST_CASE("zb-h1 p=3, m=4: W deferred until p-1 forwards are ahead of it") {
  const auto t = hetsim::make_zb_h1(3, 4);
  CHECK(t.split_backward);
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
                            "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
                            "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3",
                        });
  hetsim::validate(t);
}

TEST_CASE("zb-h1 validates over a grid") {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 20; ++m) CHECK_NOTHROW(hetsim::validate(hetsim::make_zb_h1(p, m)));
}

TEST_CASE("zb-h1's bubble is (p-1)(t_F + t_B - t_W) with t_F = t_B = t_W") {
  // Qi et al. 2024, Sec. 3.1: iteration m(t_F + t_B + t_W) + (p-1)(t_F + t_B - t_W), against
  // 1F1B's m(t_F + t_B + t_W) + (p-1)(t_F + t_B + t_W): about a third of its bubble.
  for (int p = 2; p <= 8; ++p)
    for (int m = p; m <= 3 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto timing = hetsim::evaluate(hetsim::make_zb_h1(p, m), {1.0, 1.0, 1.0, 0.0});
      CHECK(std::fabs(timing.makespan_s - (3.0 * m + (p - 1) * 1.0)) < 1e-9);
    }
}

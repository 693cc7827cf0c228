// 1F1B in Megatron-LM's non-interleaved order (forward_backward_pipelining_without_interleaving):
// rank r runs w = min(p - r - 1, m) warm-up forwards, m - w (forward, backward) pairs, then w
// backwards. The expected orders below are written out by hand from that rule.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("1f1b with p=4, m=6 follows Megatron's warm-up, steady and cool-down") {
  const auto t = hetsim::make_1f1b(4, 6);
  CHECK(t.kind == "1f1b");
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5",
                            "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5",
                            "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5",
                            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5",
                        });
  hetsim::validate(t);
}

TEST_CASE("1f1b with fewer microbatches than ranks caps the warm-up at m") {
  const auto t = hetsim::make_1f1b(4, 2);
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0 F1 B0 B1",
                            "F0 F1 B0 B1",
                            "F0 F1 B0 B1",
                            "F0 B0 F1 B1",
                        });
  hetsim::validate(t);
  CHECK(orders_of(hetsim::make_1f1b(3, 1)) ==
        std::vector<std::string>{"F0 B0", "F0 B0", "F0 B0"});
}

TEST_CASE("1f1b with one rank alternates forward and backward") {
  CHECK(orders_of(hetsim::make_1f1b(1, 3)) == std::vector<std::string>{"F0 B0 F1 B1 F2 B2"});
}

TEST_CASE("1f1b validates over a grid of (p, m)") {
  for (int p = 1; p <= 9; ++p) {
    for (int m = 1; m <= 20; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      CHECK_NOTHROW(hetsim::validate(hetsim::make_1f1b(p, m)));
    }
  }
}

TEST_CASE("1f1b rejects p < 1 and m < 1") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_1f1b(0, 4); }) ==
        "1f1b: pipeline ranks p must be >= 1 (got 0)");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_1f1b(4, 0); }) ==
        "1f1b: microbatches m must be >= 1 (got 0)");
}

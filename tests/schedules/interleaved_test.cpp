// Interleaved 1F1B in Megatron-LM's per-rank order (forward_backward_pipelining_with_interleaving).
// Orders below are written out by hand from Megatron's schedule table and warm-up count
// w = min(2(p-r-1) + (v-1)g, m v).
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("interleaved p=2, v=2, m=4 (g = p = 2)") {
  const auto t = hetsim::make_interleaved(2, 4, 2);
  CHECK(t.kind == "interleaved");
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
  // Table: (0,c0) (1,c0) (0,c1) (1,c1) (2,c0) (3,c0) (2,c1) (3,c1); rank 0 warms up 4, rank 1 2.
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 "
                            "B2.0 B3.0",
                            "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 "
                            "B2.0 B3.0",
                        });
  hetsim::validate(t);
}

TEST_CASE("interleaved p=2, v=2, m=5, g=3: Megatron's 'PP2 N3M5 VP2' table") {
  // Megatron's comment: microbatch 0 1 2 0 1 2 3 4 3 4, chunk 0 0 0 1 1 1 0 0 1 1.
  const auto t = hetsim::make_interleaved(2, 5, 2, 3);
  CHECK(orders_of(t) == std::vector<std::string>{
                            "F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 B0.1 F3.0 B1.1 F4.0 B2.1 F3.1 B0.0 F4.1 "
                            "B1.0 B2.0 B3.1 B4.1 B3.0 B4.0",
                            "F0.0 F1.0 F2.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.0 B0.0 F4.0 B1.0 F3.1 "
                            "B2.0 F4.1 B3.1 B4.1 B3.0 B4.0",
                        });
  hetsim::validate(t);
}

TEST_CASE("interleaved validates over a grid of (p, m, v, g)") {
  int checked = 0;
  for (int p = 1; p <= 6; ++p)
    for (int v = 2; v <= 4; ++v)
      for (int m = p; m <= 3 * p + 2; ++m)
        for (int g = p; g <= m; ++g) {
          if (m % g != 0 && m % g < p) continue;
          CAPTURE(p);
          CAPTURE(m);
          CAPTURE(v);
          CAPTURE(g);
          CHECK_NOTHROW(hetsim::validate(hetsim::make_interleaved(p, m, v, g)));
          ++checked;
        }
  CHECK(checked > 300);
}

TEST_CASE("interleaved rejects what Megatron-LM rejects") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_interleaved(4, 6, 2); }) ==
        "interleaved: m mod g must be 0 or >= p (m = 6, g = 4, p = 4, m mod g = 2); otherwise the "
        "last group leaves dependency bubbles; choose m a multiple of 4 or g dividing m");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_interleaved(4, 3, 2); }) ==
        "interleaved: microbatch group size g must lie in [p, m] = [4, 3] (got 4); Megatron-LM "
        "needs m >= p for the interleaved schedule");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_interleaved(4, 8, 1); }) ==
        "interleaved: chunks per rank v must be >= 2 (got 1); with one chunk use 1f1b");
  // m mod g >= p is accepted: m = 7, g = 4 leaves a final group of 3 >= p = 3.
  CHECK_NOTHROW(hetsim::validate(hetsim::make_interleaved(3, 7, 2, 4)));
}

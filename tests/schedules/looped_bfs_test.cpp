// Looped breadth-first: all microbatches through each chunk in turn, backwards chunk by chunk.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::orders_of;

TEST_CASE("bfs p=2, v=2, m=2") {
  const auto t = hetsim::make_looped_bfs(2, 2, 2);
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
  const std::string each = "F0.0 F1.0 F0.1 F1.1 B1.1 B0.1 B1.0 B0.0";
  CHECK(orders_of(t) == std::vector<std::string>{each, each});
  hetsim::validate(t);
}

TEST_CASE("bfs with one chunk is gpipe") {
  for (int p = 1; p <= 5; ++p)
    for (int m = 1; m <= 7; ++m) CHECK(hetsim::make_looped_bfs(p, m, 1).ops == hetsim::make_gpipe(p, m).ops);
}

TEST_CASE("bfs validates over a grid and rejects v < 1") {
  for (int p = 1; p <= 5; ++p)
    for (int v = 1; v <= 4; ++v)
      for (int m = 1; m <= 9; ++m) CHECK_NOTHROW(hetsim::validate(hetsim::make_looped_bfs(p, m, v)));
  CHECK(hetsim::testing::error_text<hetsim::PlanError>([] { hetsim::make_looped_bfs(2, 2, 0); }) ==
        "bfs: chunks per rank v must be >= 1 (got 0)");
}

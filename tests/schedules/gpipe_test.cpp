// GPipe (Huang et al. 2019, Fig. 2c): all forwards in order, then all backwards, latest first.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;
using hetsim::testing::orders_of;

TEST_CASE("gpipe with p=3, m=4 runs every forward before any backward") {
  const auto t = hetsim::make_gpipe(3, 4);
  CHECK(t.kind == "gpipe");
  CHECK_FALSE(t.split_backward);
  const std::string each = "F0 F1 F2 F3 B3 B2 B1 B0";
  CHECK(orders_of(t) == std::vector<std::string>{each, each, each});
  hetsim::validate(t);
}

TEST_CASE("gpipe with fewer microbatches than ranks") {
  const auto t = hetsim::make_gpipe(4, 1);
  CHECK(orders_of(t) == std::vector<std::string>{"F0 B0", "F0 B0", "F0 B0", "F0 B0"});
  hetsim::validate(t);
}

TEST_CASE("gpipe rejects p < 1 and m < 1") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_gpipe(-2, 4); }) ==
        "gpipe: pipeline ranks p must be >= 1 (got -2)");
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_gpipe(2, 0); }) ==
        "gpipe: microbatches m must be >= 1 (got 0)");
}

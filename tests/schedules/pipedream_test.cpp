// PipeDream (Narayanan et al., SOSP 2019) and PipeDream-2BW (Narayanan et al., ICML 2021): one
// iteration in 1F1B order with the parameter versions each rank stashes.
#include <doctest/doctest.h>

#include "schedules/generators.hpp"
#include "schedules/timetable_json.hpp"
#include "schedules/validator.hpp"

TEST_CASE("pipedream stashes one version per in-flight microbatch; 2bw keeps two") {
  // PipeDream Sec. 3.3: stage r keeps a weight version for each of its p - r in-flight
  // minibatches; 2BW Sec. 3.1: double-buffered weights, 2 versions.
  const auto dream = hetsim::make_pipedream(4, 8);
  CHECK(dream.weight_versions == std::vector<int>{4, 3, 2, 1});
  CHECK(dream.ops == hetsim::make_1f1b(4, 8).ops);
  const auto two = hetsim::make_pipedream_2bw(4, 8);
  CHECK(two.weight_versions == std::vector<int>{2, 2, 2, 2});
  CHECK(hetsim::make_pipedream(4, 2).weight_versions == std::vector<int>{2, 2, 2, 1});
  for (int p = 1; p <= 6; ++p)
    for (int m = 1; m <= 10; ++m) {
      CHECK_NOTHROW(hetsim::validate(hetsim::make_pipedream(p, m)));
      CHECK_NOTHROW(hetsim::validate(hetsim::make_pipedream_2bw(p, m)));
    }
  // The versions survive a JSON round trip, and timetables without them write no key.
  const auto back = hetsim::timetable_from_json(hetsim::timetable_to_json(dream), "t.json");
  CHECK(back.weight_versions == dream.weight_versions);
  CHECK_FALSE(hetsim::timetable_to_json(hetsim::make_1f1b(4, 8)).contains("weight_versions"));
}

// make_timetable: generators by name.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::testing::error_text;

TEST_CASE("every known kind builds a valid timetable of that kind") {
  for (const auto& kind : hetsim::timetable_kinds()) {
    CAPTURE(kind);
    const bool two = kind == "interleaved" || kind == "bfs" || kind == "zb-v" ||
                     kind == "v-half" || kind == "v-min" || kind == "dualpipe" || kind == "dualpipev";
    const int chunks = two ? 2 : 1;  // for seq1f1b the third number is k; 1 keeps m segments
    const auto t = hetsim::make_timetable(kind, 4, 8, chunks);
    CHECK(t.kind == kind);
    CHECK(t.chunks_per_rank == chunks);
    CHECK_NOTHROW(hetsim::validate(t));
  }
  CHECK(hetsim::make_timetable("1f1b", 3, 5, 1).ops == hetsim::make_1f1b(3, 5).ops);
}

TEST_CASE("unknown names and wrong chunk counts are plan errors") {
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_timetable("1f1f", 4, 8, 1); }) ==
        "unknown schedule '1f1f' (did you mean '1f1b'?); known schedules: " +
            [] {
              std::string known;
              for (const auto& k : hetsim::timetable_kinds()) known += (known.empty() ? "" : ", ") + k;
              return known;
            }());
  CHECK(error_text<hetsim::PlanError>([] { hetsim::make_timetable("gpipe", 4, 8, 2); }) ==
        "gpipe: chunks per rank v must be 1 (got 2); for a looped GPipe use bfs");
}

TEST_CASE("a timetable beyond the replay bound is refused before it is built") {
  // Before: --pp 10000 --mb 10000 ran over a minute and 4.9 GB; seq1f1b with 2^31-1 segments
  // ended in bad_alloc.
  CHECK_THROWS_WITH_AS(hetsim::make_timetable("1f1b", 10000, 10000, 1),
                       "1f1b: 10000 ranks x 10000 microbatches x 1 chunks make 3e+08 ops; expected at most 2e+07",
                       hetsim::PlanError);
  CHECK_THROWS_WITH_AS(hetsim::make_timetable("seq1f1b", 4, 2, 2147483647),
                       "seq1f1b: 4 ranks x 2 microbatches x 2147483647 sequence segments make 5.15e+10 ops; "
                       "expected at most 2e+07",
                       hetsim::PlanError);
  CHECK(hetsim::make_timetable("1f1b", 100, 1000, 1).ranks == 100);  // 3e5 ops: well inside
}

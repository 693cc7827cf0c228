// schedule_text: the grid for small hand-made schedules equals strings written by hand.
#include "traces/schedule_text.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "base/error.hpp"

namespace {

// 1F1B with p = 2 ranks, m = 2 microbatches, F = 1 and B = 2 time units, free communication:
// rank 1 runs F0 [1,2) B0 [2,4) F1 [4,5) B1 [5,7); rank 0 runs F0 [0,1) F1 [1,2), then each B
// once rank 1's B of that microbatch is done: B0 [4,6) B1 [7,9).
std::vector<hetsim::TimedOp> one_f_one_b() {
  return {
      {0, 'F', 0, 0, 0, 1}, {0, 'F', 1, 0, 1, 2}, {0, 'B', 0, 0, 4, 6}, {0, 'B', 1, 0, 7, 9},
      {1, 'F', 0, 0, 1, 2}, {1, 'B', 0, 0, 2, 4}, {1, 'F', 1, 0, 4, 5}, {1, 'B', 1, 0, 5, 7},
  };
}

}  // namespace

TEST_CASE("1F1B on two ranks, one cell per time unit") {
  CHECK(hetsim::schedule_text(one_f_one_b(), 2, 1.0) ==
        "rank 0 |FF..B0.B1\n"
        "rank 1 |.FB0FB1..\n");
}

TEST_CASE("1F1B on two ranks, two cells per time unit show microbatch digits") {
  CHECK(hetsim::schedule_text(one_f_one_b(), 2, 0.5) ==
        "rank 0 |F0F1....B000..B111\n"
        "rank 1 |..F0B000F1B111....\n");
}

TEST_CASE("odd chunks are lower case, offloads get a copy line, microbatch shows its last digit") {
  const std::vector<hetsim::TimedOp> ops{{0, 'F', 12, 0, 0, 2},
                                         {0, 'F', 12, 1, 2, 4},
                                         {0, 'O', 12, 0, 2, 3},
                                         {0, 'R', 12, 0, 5, 6},
                                         {0, 'b', 0, 0, 0, 0}};
  CHECK_THROWS_WITH_AS(hetsim::schedule_text(ops, 1, 1.0),
                       "schedule drawing: op 4 b (rank 0, microbatch 0, chunk 0, [0, 0]): expected "
                       "a kind among F, B, W, O, R",
                       hetsim::Error);
  const std::vector<hetsim::TimedOp> good(ops.begin(), ops.end() - 1);
  CHECK(hetsim::schedule_text(good, 2, 1.0) ==
        "rank 0 |F2f2..\n"
        "copy 0 |..O..R\n"
        "rank 1 |......\n"
        "copy 1 |......\n");
}

TEST_CASE("rank numbers align when there are ten or more ranks") {
  const std::vector<hetsim::TimedOp> ops{{10, 'W', 3, 0, 1, 3}};
  const std::string text = hetsim::schedule_text(ops, 11, 1.0);
  CHECK(text.substr(0, 12) == "rank  0 |...");
  CHECK(text.substr(text.size() - 13) == "rank 10 |.W3\n");
}

TEST_CASE("bad inputs are rejected with the op named") {
  const std::vector<hetsim::TimedOp> ops{{2, 'F', 0, 0, 0, 1}};
  CHECK_THROWS_WITH_AS(hetsim::schedule_text(ops, 2, 1.0),
                       "schedule drawing: op 0 F (rank 2, microbatch 0, chunk 0, [0, 1]): expected "
                       "a rank in [0, 2)",
                       hetsim::Error);
  const std::vector<hetsim::TimedOp> backwards{{0, 'B', 0, 0, 3, 1}};
  CHECK_THROWS_WITH_AS(hetsim::schedule_text(backwards, 1, 1.0),
                       "schedule drawing: op 0 B (rank 0, microbatch 0, chunk 0, [3, 1]): expected "
                       "finite times with 0 <= start <= end",
                       hetsim::Error);
  CHECK_THROWS_WITH_AS(hetsim::schedule_text({}, 0, 1.0),
                       "schedule drawing: 0 ranks; expected at least 1", hetsim::Error);
  CHECK_THROWS_WITH_AS(hetsim::schedule_text({}, 1, 0.0),
                       "schedule text: time unit 0; expected a positive number", hetsim::Error);
  CHECK_THROWS_WITH_AS(hetsim::schedule_text(ops, 3, 1e-6),
                       "schedule text: 1000000 cells of 1e-06 for a schedule ending at 1; expected "
                       "at most 100000 (choose a larger time unit)",
                       hetsim::Error);
}

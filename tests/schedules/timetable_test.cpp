// The timetable vocabulary: Megatron's looped placement, stage lookup, dependencies, names.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/timetable.hpp"

using hetsim::OpKind;
using hetsim::RankOp;
using hetsim::ScheduledOp;
using hetsim::Timetable;

namespace {
// p = 2 ranks, v = 2 chunks, looped: rank 0 holds stages 0 and 2, rank 1 holds stages 1 and 3.
Timetable looped_2x2(bool split) {
  Timetable t;
  t.kind = "test";
  t.ranks = 2;
  t.microbatches = 3;
  t.chunks_per_rank = 2;
  t.split_backward = split;
  t.ops.resize(2);
  t.stage_of = hetsim::looped_stage_map(2, 2);
  return t;
}
RankOp at(int rank, OpKind kind, int mb, int chunk) { return {rank, {kind, mb, chunk}}; }
}  // namespace

TEST_CASE("op letters") {
  CHECK(hetsim::to_char(OpKind::kForward) == 'F');
  CHECK(hetsim::to_char(OpKind::kBackward) == 'B');
  CHECK(hetsim::to_char(OpKind::kWeight) == 'W');
}

TEST_CASE("looped stage map: stage = chunk * p + rank (Megatron-LM)") {
  CHECK(hetsim::looped_stage_map(3, 2) == std::vector<std::vector<int>>{{0, 3}, {1, 4}, {2, 5}});
  const Timetable t = looped_2x2(false);
  CHECK(t.stages() == 4);
  CHECK(t.locate_stage(3) == at(1, OpKind::kForward, 0, 1));
  CHECK(t.locate_stage(2) == at(0, OpKind::kForward, 0, 1));
  CHECK(hetsim::testing::error_text<hetsim::ScheduleError>([&] { t.locate_stage(4); }) ==
        "timetable 'test' has no virtual stage 4 (stages 0..3)");
}

TEST_CASE("dependencies cross chunks and ranks") {
  const Timetable t = looped_2x2(true);
  using V = std::vector<RankOp>;
  // F of stage 2 (rank 0, chunk 1) needs F of stage 1 (rank 1, chunk 0).
  CHECK(hetsim::dependencies(t, 0, {OpKind::kForward, 1, 1}) == V{at(1, OpKind::kForward, 1, 0)});
  // The first stage's forward needs nothing.
  CHECK(hetsim::dependencies(t, 0, {OpKind::kForward, 1, 0}).empty());
  // B of stage 1 (rank 1, chunk 0) needs B of stage 2 (rank 0, chunk 1) and its own F.
  CHECK(hetsim::dependencies(t, 1, {OpKind::kBackward, 2, 0}) ==
        V{at(0, OpKind::kBackward, 2, 1), at(1, OpKind::kForward, 2, 0)});
  // The last stage's backward needs only its forward.
  CHECK(hetsim::dependencies(t, 1, {OpKind::kBackward, 0, 1}) == V{at(1, OpKind::kForward, 0, 1)});
  // W needs this stage's B.
  CHECK(hetsim::dependencies(t, 0, {OpKind::kWeight, 0, 1}) == V{at(0, OpKind::kBackward, 0, 1)});
}

TEST_CASE("describe names kind, microbatch, virtual stage and rank") {
  const Timetable t = looped_2x2(false);
  CHECK(hetsim::describe(t, at(1, OpKind::kBackward, 2, 1)) == "B(mb 2, stage 3) on rank 1");
  CHECK(hetsim::describe(t, at(0, OpKind::kForward, 0, 0)) == "F(mb 0, stage 0) on rank 0");
}

TEST_CASE("stage_locations rejects a stage_of that is not a bijection") {
  Timetable t = looped_2x2(false);
  t.stage_of = {{0, 1}, {1, 3}};
  CHECK(hetsim::testing::error_text<hetsim::ScheduleError>([&] { hetsim::stage_locations(t); }) ==
        "timetable 'test': stage_of[1][0] = 1 is not a free stage in 0..3; stage_of must map each "
        "(rank, chunk) to a different stage");
}

// The validator: ops exactly once, same-rank order, and deadlocks named by their wait-for cycle.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

using hetsim::OpKind;
using hetsim::ScheduleError;
using hetsim::ScheduledOp;
using hetsim::Timetable;
using hetsim::testing::error_text;

namespace {
ScheduledOp F(int mb, int chunk = 0) { return {OpKind::kForward, mb, chunk}; }
ScheduledOp B(int mb, int chunk = 0) { return {OpKind::kBackward, mb, chunk}; }
ScheduledOp W(int mb, int chunk = 0) { return {OpKind::kWeight, mb, chunk}; }

Timetable custom(int ranks, int microbatches, std::vector<std::vector<ScheduledOp>> ops) {
  Timetable t;
  t.kind = "custom";
  t.ranks = ranks;
  t.microbatches = microbatches;
  t.ops = std::move(ops);
  t.stage_of = hetsim::looped_stage_map(ranks, 1);
  return t;
}
std::string validation_error(const Timetable& t) {
  return error_text<ScheduleError>([&] { hetsim::validate(t); });
}
}  // namespace

TEST_CASE("a hand-made deadlock is reported with its wait-for cycle") {
  // Rank 1 runs microbatch 1 before microbatch 0; rank 0 wants B0 before sending F1.
  const Timetable t = custom(2, 2, {{F(0), B(0), F(1), B(1)}, {F(1), B(1), F(0), B(0)}});
  CHECK(validation_error(t) ==
        "timetable 'custom' deadlocks: B(mb 0, stage 0) on rank 0 waits for B(mb 0, stage 1) on "
        "rank 1, which is queued behind F(mb 1, stage 1) on rank 1; F(mb 1, stage 1) on rank 1 "
        "waits for F(mb 1, stage 0) on rank 0, which is queued behind B(mb 0, stage 0) on rank 0");
}

TEST_CASE("a three-rank cycle names every rank in it, starting at the lowest") {
  // Rank 2 (the last stage) takes mb 1 first; rank 1 insists on B0 before F1.
  const Timetable t = custom(3, 2,
                             {{F(0), F(1), B(0), B(1)},
                              {F(0), B(0), F(1), B(1)},
                              {F(1), B(1), F(0), B(0)}});
  CHECK(validation_error(t) ==
        "timetable 'custom' deadlocks: B(mb 0, stage 1) on rank 1 waits for B(mb 0, stage 2) on "
        "rank 2, which is queued behind F(mb 1, stage 2) on rank 2; F(mb 1, stage 2) on rank 2 "
        "waits for F(mb 1, stage 1) on rank 1, which is queued behind B(mb 0, stage 1) on rank 1");
}

TEST_CASE("an op listed before its same-rank dependency is named") {
  const Timetable t = custom(2, 1, {{F(0), B(0)}, {B(0), F(0)}});
  CHECK(validation_error(t) ==
        "timetable 'custom': B(mb 0, stage 1) on rank 1 at position 0 is scheduled before F(mb 0, "
        "stage 1) on rank 1 at position 1, which it depends on");
}

TEST_CASE("missing and duplicated ops are named") {
  Timetable missing = hetsim::make_1f1b(2, 2);
  missing.ops[0].pop_back();  // B1 of stage 0
  CHECK(validation_error(missing) ==
        "timetable '1f1b' is missing 1 op: B(mb 1, stage 0) on rank 0");

  Timetable many_missing = hetsim::make_1f1b(2, 10);
  many_missing.ops[1].clear();
  CHECK(validation_error(many_missing) ==
        "timetable '1f1b' is missing 20 ops: F(mb 0, stage 1) on rank 1, F(mb 1, stage 1) on rank "
        "1, F(mb 2, stage 1) on rank 1, F(mb 3, stage 1) on rank 1, F(mb 4, stage 1) on rank 1, F(mb "
        "5, stage 1) on rank 1, F(mb 6, stage 1) on rank 1, F(mb 7, stage 1) on rank 1 and 12 more");

  Timetable twice = hetsim::make_1f1b(2, 2);
  twice.ops[0].push_back(F(0));
  CHECK(validation_error(twice) ==
        "timetable '1f1b': F(mb 0, stage 0) on rank 0 appears twice, at positions 0 and 4");
}

TEST_CASE("out-of-range fields and misplaced weight ops are rejected") {
  Timetable t = hetsim::make_1f1b(2, 2);
  t.ops[1][0].microbatch = 2;
  CHECK(validation_error(t) ==
        "timetable '1f1b': rank 1 position 0 has F of microbatch 2; microbatches are 0..1");
  t = hetsim::make_1f1b(2, 2);
  t.ops[0][1].chunk = 1;
  CHECK(validation_error(t) ==
        "timetable '1f1b': rank 0 position 1 has F of chunk 1; chunks are 0..0");
  t = hetsim::make_1f1b(2, 2);
  t.ops[0].push_back(W(0));
  CHECK(validation_error(t) ==
        "timetable '1f1b': W(mb 0, stage 0) on rank 0 at position 4 is a weight-gradient op, but "
        "split_backward is false");
  t = hetsim::make_1f1b(2, 2);
  t.split_backward = true;  // now every W is required
  CHECK(validation_error(t) ==
        "timetable '1f1b' is missing 4 ops: W(mb 0, stage 0) on rank 0, W(mb 1, stage 0) on rank 0, "
        "W(mb 0, stage 1) on rank 1, W(mb 1, stage 1) on rank 1");
}

TEST_CASE("shape errors: op lists, stage_of rows, bijection") {
  Timetable t = hetsim::make_1f1b(2, 2);
  t.ops.pop_back();
  CHECK(validation_error(t) == "timetable '1f1b': has 1 op lists for 2 ranks");
  t = hetsim::make_1f1b(2, 2);
  t.stage_of = {{1}, {1}};
  CHECK(validation_error(t) ==
        "timetable '1f1b': stage_of[1][0] = 1 is not a free stage in 0..1; stage_of must map each "
        "(rank, chunk) to a different stage");
}

TEST_CASE("a split timetable with W after B validates; W before its B does not") {
  Timetable t = custom(2, 1, {{F(0), B(0), W(0)}, {F(0), B(0), W(0)}});
  t.split_backward = true;
  CHECK_NOTHROW(hetsim::validate(t));
  t.ops[0] = {F(0), W(0), B(0)};
  CHECK(validation_error(t) ==
        "timetable 'custom': W(mb 0, stage 0) on rank 0 at position 1 is scheduled before B(mb 0, "
        "stage 0) on rank 0 at position 2, which it depends on");
}

TEST_CASE("validation of p=128, m=1024 1F1B runs in one linear pass") {
  // 262144 ops; the walk wakes each parked rank once per completed op it waits on.
  CHECK_NOTHROW(hetsim::validate(hetsim::make_1f1b(128, 1024)));
  CHECK_NOTHROW(hetsim::validate(hetsim::make_gpipe(128, 1024)));
}

// Oracle for make_zb_v: PyTorch's ZB-V order, re-expressed here from
//   pytorch/pytorch, torch/distributed/pipelining/schedules.py:
//   ScheduleZBVZeroBubble._calculate_single_rank_operations.
//
// What the reference builds for rank r of p (2p stages, two per rank: stage r and stage 2p-1-r),
// as a list of actions (stage, F | I | W, microbatch) with per-(stage, kind) counters:
//   * it works on n = max(2p-1, m) microbatches, never rejecting m;
//   * the list starts with r empty slots;
//   * warm-up: 2(p-r)-1 F on stage r; r pairs (F on 2p-1-r, F on r); p-r triples (F, I, W on
//     2p-1-r), the I and W of one microbatch together;
//   * stable: while stage 2p-1-r has fewer forwards than stage r, or stage r has fewer than n:
//     F on stage r (only while it has fewer than n), I and W on stage r, F, I, W on 2p-1-r;
//   * cool-down: remember the W counters; r pairs (I on r, I on 2p-1-r); p-r pairs (I on r, W on
//     r from the remembered counter); then the remaining W's of 2p-1-r, then those of r;
//   * it asserts every stage ran as many W's as I's as F's;
//   * finally every action of a microbatch >= m becomes an empty slot.
// The oracle below keeps the reference's structure (slots, stage ids, counters keyed by stage and
// kind, the end assertions) and only then translates.
//
// Numbering: drop the empty slots; stage r is our chunk 0 and stage 2p-1-r our chunk 1 (the V
// placement, stage_of = {r, 2p-1-r}); F is F, I (input gradient) is our B, W is W
// (split_backward = true); PyTorch's microbatch index is ours.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

namespace {

using hetsim::OpKind;
using hetsim::ScheduledOp;

enum class Act { F, I, W };
struct Action {
  int stage;
  Act type;
  int microbatch;
};

// The reference's list for one rank; nullopt is an empty slot.
std::vector<std::optional<Action>> zbv_rank_actions(int p, int m, int rank) {
  const int stages = 2 * p;
  const int n = std::max(2 * p - 1, m);
  const int down = rank;               // stage of the descending leg
  const int up = stages - 1 - rank;    // stage of the ascending leg
  std::map<std::pair<int, Act>, int> count;
  std::vector<std::optional<Action>> slots(static_cast<std::size_t>(rank));
  const auto emit = [&](int stage, Act type, int mb) { slots.push_back(Action{stage, type, mb}); };
  const auto next = [&](int stage, Act type) { return count[{stage, type}]++; };

  for (int i = 0; i < 2 * (p - rank) - 1; ++i) emit(down, Act::F, next(down, Act::F));
  for (int i = 0; i < rank; ++i) {
    emit(up, Act::F, next(up, Act::F));
    emit(down, Act::F, next(down, Act::F));
  }
  for (int i = 0; i < p - rank; ++i) {
    emit(up, Act::F, next(up, Act::F));
    const int mb = next(up, Act::I);  // I and W share the backward counter here
    emit(up, Act::I, mb);
    emit(up, Act::W, mb);
  }
  while (count[{up, Act::F}] < count[{down, Act::F}] || count[{down, Act::F}] < n) {
    if (count[{down, Act::F}] < n) emit(down, Act::F, next(down, Act::F));
    int mb = next(down, Act::I);
    emit(down, Act::I, mb);
    emit(down, Act::W, mb);
    emit(up, Act::F, next(up, Act::F));
    mb = next(up, Act::I);
    emit(up, Act::I, mb);
    emit(up, Act::W, mb);
  }
  // Until here each W ran with its I; the cool-down's W counters start where the I's are.
  int w_down = count[{down, Act::I}];
  int w_up = count[{up, Act::I}];
  for (int i = 0; i < rank; ++i) {
    emit(down, Act::I, next(down, Act::I));
    emit(up, Act::I, next(up, Act::I));
  }
  for (int i = 0; i < p - rank; ++i) {
    emit(down, Act::I, next(down, Act::I));
    emit(down, Act::W, w_down++);
  }
  while (w_up < count[{up, Act::I}]) emit(up, Act::W, w_up++);
  while (w_down < count[{down, Act::I}]) emit(down, Act::W, w_down++);

  // The reference's closing assertions.
  REQUIRE(w_down == count[{down, Act::I}]);
  REQUIRE(count[{down, Act::I}] == count[{down, Act::F}]);
  REQUIRE(w_up == count[{up, Act::I}]);
  REQUIRE(count[{up, Act::I}] == count[{up, Act::F}]);

  for (auto& slot : slots)
    if (slot && slot->microbatch >= m) slot.reset();
  return slots;
}

std::vector<ScheduledOp> zbv_rank_ops(int p, int m, int rank) {
  std::vector<ScheduledOp> ops;
  for (const auto& slot : zbv_rank_actions(p, m, rank)) {
    if (!slot) continue;
    int chunk = -1;
    if (slot->stage == rank) chunk = 0;
    if (slot->stage == 2 * p - 1 - rank) chunk = 1;
    REQUIRE(chunk >= 0);
    const OpKind kind = slot->type == Act::F   ? OpKind::kForward
                        : slot->type == Act::I ? OpKind::kBackward
                                               : OpKind::kWeight;
    ops.push_back({kind, slot->microbatch, chunk});
  }
  return ops;
}

}  // namespace

TEST_CASE("make_zb_v equals PyTorch's ScheduleZBVZeroBubble per-rank order over the grid") {
  for (int p = 2; p <= 8; ++p)
    for (int m = 1; m <= 4 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const hetsim::Timetable t = hetsim::make_zb_v(p, m);  // the reference accepts every m
      REQUIRE(t.ranks == p);
      REQUIRE(t.microbatches == m);
      REQUIRE(t.chunks_per_rank == 2);
      REQUIRE(t.split_backward);
      for (int rank = 0; rank < p; ++rank) {
        CAPTURE(rank);
        REQUIRE(t.stage_of[rank] == std::vector<int>{rank, 2 * p - 1 - rank});
        const auto expected = zbv_rank_ops(p, m, rank);
        CHECK(expected.size() == static_cast<std::size_t>(6 * m));
        REQUIRE(t.ops[rank] == expected);
      }
    }
}

TEST_CASE("zb-v oracle orders are runnable, the padded ones included") {
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 4 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      hetsim::Timetable t;
      t.kind = "zbv-oracle";
      t.ranks = p;
      t.microbatches = m;
      t.chunks_per_rank = 2;
      t.split_backward = true;
      for (int rank = 0; rank < p; ++rank) {
        t.stage_of.push_back({rank, 2 * p - 1 - rank});
        t.ops.push_back(zbv_rank_ops(p, m, rank));
      }
      REQUIRE_NOTHROW(hetsim::validate(t));
      CHECK(hetsim::make_zb_v(p, m).ops == t.ops);  // p = 1 too, outside the required grid
    }
}

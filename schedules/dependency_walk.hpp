#pragma once
// Runs a timetable's ranks through their op lists in dependency order, as the validator (can it
// finish?) and the evaluator (when does each op end?) both need: a rank runs its next op, or its
// next overlapped F&B pair as one unit, once every dependency of the unit is done; otherwise it
// parks on the first unfinished one and is woken when that op is done. O(total ops); parked
// ranks form intrusive lists, so the walk allocates only O(ops) up front.
#include <array>
#include <cstddef>
#include <functional>
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim {

// Dense index of (kind, microbatch, stage) over a timetable's ops.
class OpIndex {
 public:
  OpIndex(int microbatches, int stages) : microbatches_(microbatches), stages_(stages) {}
  std::size_t size() const { return 3 * static_cast<std::size_t>(microbatches_) * stages_; }
  std::size_t of(OpKind kind, int microbatch, int stage) const {
    return (static_cast<std::size_t>(kind) * microbatches_ + microbatch) * stages_ + stage;
  }
  std::size_t of(const Timetable& t, const RankOp& op) const {
    return of(op.op.kind, op.op.microbatch, t.stage(op.rank, op.op.chunk));
  }

 private:
  int microbatches_;
  int stages_;
};

// The dependencies of one unit (an op, or both ops of a pair, whose B never needs its F),
// and the cross-rank inputs of the ops whose receives its ops wait for (Timetable::
// early_receives): at most two per op and two per early receive, held inline. An input from
// another rank sent after a later op there (Timetable::late_sends) is that later op.
struct UnitDependencies {
  std::array<RankOp, 8> ops{};
  int count = 0;
  const RankOp* begin() const { return ops.data(); }
  const RankOp* end() const { return ops.data() + count; }
};

struct WalkResult {
  std::vector<std::size_t> next;   // [rank] position of its first op not run (list size: all ran)
  std::vector<RankOp> waits_for;   // [rank] the dependency a rank left unfinished is parked on
};

// Calls `run(rank, position, ops, dependencies)` for each unit when it runs: `ops` (1, or 2 for an
// overlapped pair) starting at `position` of the rank's list. After it returns, the unit's ops
// are done. Ranks left with ops when nothing can run are stuck (see WalkResult).
WalkResult walk_dependencies(
    const Timetable& t, const std::vector<RankOp>& located,
    const std::function<void(int, std::size_t, std::size_t, const UnitDependencies&)>& run);

}  // namespace hetsim

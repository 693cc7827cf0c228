#include "schedules/evaluator.hpp"

#include <algorithm>
#include <deque>

#include "schedules/validator.hpp"

namespace hetsim {

TimetableTiming evaluate(const Timetable& t, const UniformOpTimes& times) {
  validate(t);  // after this, the walk below cannot get stuck
  const std::vector<RankOp> located = stage_locations(t);
  const auto id_of = [&](const RankOp& op) {
    return (static_cast<std::size_t>(op.op.kind) * t.microbatches + op.op.microbatch) * t.stages() +
           t.stage(op.rank, op.op.chunk);
  };
  const auto duration = [&](OpKind kind) {
    switch (kind) {
      case OpKind::kForward: return times.forward_s;
      case OpKind::kBackward: return times.backward_s;
      case OpKind::kWeight: return times.weight_s;
    }
    return 0.0;
  };
  constexpr double kNotDone = -1.0;
  const std::size_t op_count = 3 * static_cast<std::size_t>(t.microbatches) * t.stages();
  std::vector<double> finish(op_count, kNotDone);
  std::vector<std::vector<int>> parked(op_count);
  std::vector<std::size_t> next(static_cast<std::size_t>(t.ranks), 0);
  std::vector<double> free_at(static_cast<std::size_t>(t.ranks), 0.0);
  TimetableTiming timing;
  timing.busy_s.assign(static_cast<std::size_t>(t.ranks), 0.0);
  std::deque<int> runnable;
  for (int rank = 0; rank < t.ranks; ++rank) runnable.push_back(rank);
  while (!runnable.empty()) {
    const int rank = runnable.front();
    runnable.pop_front();
    while (next[rank] < t.ops[rank].size()) {
      const RankOp op{rank, t.ops[rank][next[rank]]};
      double start = free_at[rank];
      bool blocked = false;
      for (const RankOp& dep : dependencies(t, located, rank, op.op)) {
        const double done = finish[id_of(dep)];
        if (done == kNotDone) {
          parked[id_of(dep)].push_back(rank);
          blocked = true;
          break;
        }
        start = std::max(start, done + (dep.rank == rank ? 0.0 : times.transfer_s));
      }
      if (blocked) break;
      const double d = duration(op.op.kind);
      const std::size_t id = id_of(op);
      finish[id] = start + d;
      free_at[rank] = start + d;
      timing.busy_s[rank] += d;
      timing.makespan_s = std::max(timing.makespan_s, start + d);
      for (const int woken : parked[id]) runnable.push_back(woken);
      parked[id].clear();
      ++next[rank];
    }
  }
  return timing;
}

}  // namespace hetsim

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
  timing.start_s.assign(static_cast<std::size_t>(t.ranks), 0.0);
  timing.end_s.assign(static_cast<std::size_t>(t.ranks), 0.0);
  std::deque<int> runnable;
  for (int rank = 0; rank < t.ranks; ++rank) runnable.push_back(rank);
  // An overlapped pair (F then B) starts when both ops' inputs are in, takes overlapped_s, and
  // both finish at its end, as DualPipe's _forward_backward_chunk sends both results after it.
  const auto starts = pair_starts(t);
  const double pair_s =
      times.overlapped_s >= 0.0 ? times.overlapped_s : times.forward_s + times.backward_s;
  while (!runnable.empty()) {
    const int rank = runnable.front();
    runnable.pop_front();
    const auto& list = t.ops[rank];
    while (next[rank] < list.size()) {
      const std::size_t unit = starts[rank][next[rank]] ? 2 : 1;
      const std::size_t first_id = id_of({rank, list[next[rank]]});
      double start = free_at[rank];
      bool blocked = false;
      for (std::size_t k = 0; k < unit && !blocked; ++k) {
        for (const RankOp& dep : dependencies(t, located, rank, list[next[rank] + k])) {
          const std::size_t dep_id = id_of(dep);
          if (k > 0 && dep_id == first_id) continue;
          const double done = finish[dep_id];
          if (done == kNotDone) {
            parked[dep_id].push_back(rank);
            blocked = true;
            break;
          }
          start = std::max(start, done + (dep.rank == rank ? 0.0 : times.transfer_s));
        }
      }
      if (blocked) break;
      const double d = unit == 2 ? pair_s : duration(list[next[rank]].kind);
      if (next[rank] == 0) timing.start_s[rank] = start;
      timing.end_s[rank] = start + d;
      free_at[rank] = start + d;
      timing.busy_s[rank] += d;
      timing.makespan_s = std::max(timing.makespan_s, start + d);
      for (std::size_t k = 0; k < unit; ++k) {
        const std::size_t id = id_of({rank, list[next[rank]]});
        finish[id] = start + d;
        for (const int woken : parked[id]) runnable.push_back(woken);
        parked[id].clear();
        ++next[rank];
      }
    }
  }
  return timing;
}

double TimetableTiming::longest_span_s() const {
  double longest = 0.0;
  for (std::size_t r = 0; r < busy_s.size(); ++r) longest = std::max(longest, end_s[r] - start_s[r]);
  return longest;
}

std::vector<int> peak_activations(const Timetable& t, ActivationRelease release) {
  const OpKind frees = (release == ActivationRelease::kAtWeight && t.split_backward)
                           ? OpKind::kWeight
                           : OpKind::kBackward;
  std::vector<int> peaks(static_cast<std::size_t>(t.ranks), 0);
  for (int rank = 0; rank < t.ranks; ++rank) {
    int alive = 0;
    for (const ScheduledOp& op : t.ops[rank]) {
      if (op.kind == OpKind::kForward) ++alive;
      if (op.kind == frees) --alive;
      peaks[rank] = std::max(peaks[rank], alive);
    }
  }
  return peaks;
}

}  // namespace hetsim

#include "schedules/evaluator.hpp"

#include <algorithm>

#include "schedules/dependency_walk.hpp"
#include "schedules/validator.hpp"

namespace hetsim {

TimetableTiming evaluate(const Timetable& t, const UniformOpTimes& times) {
  validate(t);  // after this, the walk below cannot get stuck
  const OpIndex index(t.microbatches, t.stages());
  const auto duration = [&](OpKind kind) {
    switch (kind) {
      case OpKind::kForward: return times.forward_s;
      case OpKind::kBackward: return times.backward_s;
      case OpKind::kWeight: return times.weight_s;
    }
    return 0.0;
  };
  std::vector<double> finish(index.size(), 0.0);
  std::vector<double> free_at(static_cast<std::size_t>(t.ranks), 0.0);
  TimetableTiming timing;
  timing.busy_s.assign(static_cast<std::size_t>(t.ranks), 0.0);
  timing.start_s.assign(static_cast<std::size_t>(t.ranks), 0.0);
  timing.end_s.assign(static_cast<std::size_t>(t.ranks), 0.0);
  // An overlapped pair (F then B) starts when both ops' inputs are in, takes overlapped_s, and
  // both finish at its end, as DualPipe's _forward_backward_chunk sends both results after it.
  const double pair_s =
      times.overlapped_s >= 0.0 ? times.overlapped_s : times.forward_s + times.backward_s;
  walk_dependencies(t, stage_locations(t),
                    [&](int rank, std::size_t position, std::size_t unit, const UnitDependencies& deps) {
                      double start = free_at[rank];
                      for (const RankOp& dep : deps)
                        start = std::max(start, finish[index.of(t, dep)] +
                                                    (dep.rank == rank ? 0.0 : times.transfer_s));
                      const auto& list = t.ops[rank];
                      const double d = unit == 2 ? pair_s : duration(list[position].kind);
                      if (position == 0) timing.start_s[rank] = start;
                      timing.end_s[rank] = start + d;
                      free_at[rank] = start + d;
                      timing.busy_s[rank] += d;
                      timing.makespan_s = std::max(timing.makespan_s, start + d);
                      for (std::size_t k = 0; k < unit; ++k)
                        finish[index.of(t, {rank, list[position + k]})] = start + d;
                    });
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

#include "schedules/dependency_walk.hpp"

#include <deque>

namespace hetsim {

WalkResult walk_dependencies(
    const Timetable& t, const std::vector<RankOp>& located,
    const std::function<void(int, std::size_t, std::size_t, const UnitDependencies&)>& run) {
  constexpr int kNone = -1;
  const OpIndex index(t.microbatches, t.stages());
  std::vector<bool> done(index.size(), false);
  std::vector<int> parked_head(index.size(), kNone);
  std::vector<int> parked_next(static_cast<std::size_t>(t.ranks), kNone);
  WalkResult result;
  result.next.assign(static_cast<std::size_t>(t.ranks), 0);
  result.waits_for.resize(static_cast<std::size_t>(t.ranks));
  std::deque<int> runnable;
  for (int rank = 0; rank < t.ranks; ++rank) runnable.push_back(rank);
  const auto starts = pair_starts(t);
  while (!runnable.empty()) {
    const int rank = runnable.front();
    runnable.pop_front();
    const auto& list = t.ops[rank];
    std::size_t& next = result.next[rank];
    while (next < list.size()) {
      const std::size_t unit = starts[rank][next] ? 2 : 1;
      const std::size_t first_id = index.of(t, {rank, list[next]});
      UnitDependencies deps;
      bool blocked = false;
      for (std::size_t k = 0; k < unit && !blocked; ++k) {
        for (const RankOp& dep : dependencies(t, located, rank, list[next + k])) {
          const std::size_t dep_id = index.of(t, dep);
          // The pair's B may depend on its own F: the pair runs them together.
          if (k > 0 && dep_id == first_id) continue;
          if (!done[dep_id]) {
            result.waits_for[rank] = dep;
            parked_next[rank] = parked_head[dep_id];
            parked_head[dep_id] = rank;
            blocked = true;
            break;
          }
          deps.ops[static_cast<std::size_t>(deps.count++)] = dep;
        }
      }
      if (blocked) break;
      run(rank, next, unit, deps);
      for (std::size_t k = 0; k < unit; ++k) {
        const std::size_t id = index.of(t, {rank, list[next]});
        done[id] = true;
        for (int woken = parked_head[id]; woken != kNone; woken = parked_next[woken])
          runnable.push_back(woken);
        parked_head[id] = kNone;
        ++next;
      }
    }
  }
  return result;
}

}  // namespace hetsim

#include "schedules/dependency_walk.hpp"

#include <deque>
#include <unordered_map>

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
  const auto early = early_receive_targets(t);
  // Ops whose outputs leave with a later op of their rank (Timetable::late_sends), by op index.
  std::unordered_map<std::size_t, RankOp> sent_with;
  for (std::size_t rank = 0; rank < t.late_sends.size(); ++rank)
    for (const OpLink& e : t.late_sends[rank])
      sent_with[index.of(t, {static_cast<int>(rank), t.ops[rank][e.first]})] = {
          static_cast<int>(rank), t.ops[rank][e.second]};
  while (!runnable.empty()) {
    const int rank = runnable.front();
    runnable.pop_front();
    const auto& list = t.ops[rank];
    std::size_t& next = result.next[rank];
    while (next < list.size()) {
      const std::size_t unit = starts[rank][next] ? 2 : 1;
      UnitDependencies deps;
      bool blocked = false;
      // Adds `dep` to the unit's dependencies, or parks the rank on it when it is not done.
      const auto need = [&](RankOp dep) {
        // Another rank's output arrives with the op it is sent after, which follows it there.
        if (dep.rank != rank)
          if (const auto it = sent_with.find(index.of(t, dep)); it != sent_with.end()) dep = it->second;
        const std::size_t dep_id = index.of(t, dep);
        if (!done[dep_id]) {
          result.waits_for[rank] = dep;
          parked_next[rank] = parked_head[dep_id];
          parked_head[dep_id] = rank;
          blocked = true;
          return;
        }
        deps.ops[static_cast<std::size_t>(deps.count++)] = dep;
      };
      for (std::size_t k = 0; k < unit && !blocked; ++k) {
        for (const RankOp& dep : dependencies(t, located, rank, list[next + k])) {
          need(dep);
          if (blocked) break;
        }
        // A receive posted ahead for a later op: only that op's inputs from other ranks.
        if (const int ahead = early[rank][next + k]; ahead >= 0 && !blocked) {
          for (const RankOp& dep : dependencies(t, located, rank, list[ahead])) {
            if (dep.rank == rank) continue;
            need(dep);
            if (blocked) break;
          }
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

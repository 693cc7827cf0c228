#pragma once
// PipeOffload (Wan et al. 2025): which activations leave HBM for host memory between their F and
// their B, and when each comes back. A fraction f of each rank's (microbatch, chunk) activations
// is offloaded, spread evenly over the rank's forwards in timetable order (the i-th forward is
// offloaded when floor((i + 1) f) > floor(i f)). An activation is offloaded only when some other
// op runs between its F and its B; its reload is issued when the op just before that B starts
// (before the overlapped pair, when B is the second op of one), so that, given a copy faster than
// that op, it has finished when B needs it (B waits otherwise).
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim {

struct OffloadPlan {
  // [rank][microbatch * chunks_per_rank + chunk] -> 1 when that activation is offloaded.
  std::vector<std::vector<char>> offloaded;
  // [rank][position] -> the (microbatch, chunk) activations to reload when that op starts.
  std::vector<std::vector<std::vector<ScheduledOp>>> reload_at;
  bool empty() const { return offloaded.empty(); }
  bool is_offloaded(int rank, int microbatch, int chunk, int chunks_per_rank) const {
    return !offloaded.empty() && offloaded[rank][microbatch * chunks_per_rank + chunk];
  }
};

// An empty plan for fraction 0; throws PlanError for a fraction outside [0, 1].
OffloadPlan plan_offload(const Timetable& timetable, double fraction);

}  // namespace hetsim

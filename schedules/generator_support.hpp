#pragma once
// Shared by the generators: argument checks and an empty timetable with the looped stage map.
#include <string>
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim {

// Throws PlanError "<kind>: <name> must be >= <minimum> (got <value>)" when value < minimum.
void require_at_least(const std::string& kind, const std::string& name, int value, int minimum);

// A timetable with no ops yet, Megatron's looped placement and one op list per rank.
Timetable empty_timetable(const std::string& kind, int ranks, int microbatches, int chunks_per_rank,
                          bool split_backward);

// The V placement of ZB-V, V-Half, V-Min and DualPipeV: chunk 0 of rank r is stage r, chunk 1
// is stage 2p-1-r, so stages 0 and 2p-1 share rank 0.
std::vector<std::vector<int>> v_stage_map(int ranks);

inline ScheduledOp forward(int microbatch, int chunk = 0) {
  return {OpKind::kForward, microbatch, chunk};
}
inline ScheduledOp backward(int microbatch, int chunk = 0) {
  return {OpKind::kBackward, microbatch, chunk};
}
inline ScheduledOp weight(int microbatch, int chunk = 0) {
  return {OpKind::kWeight, microbatch, chunk};
}

}  // namespace hetsim

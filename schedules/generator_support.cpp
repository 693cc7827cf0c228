#include "schedules/generator_support.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace hetsim {

void require_at_least(const std::string& kind, const std::string& name, int value, int minimum) {
  if (value < minimum) {
    throw PlanError(fmt::format("{}: {} must be >= {} (got {})", kind, name, minimum, value));
  }
}

Timetable empty_timetable(const std::string& kind, int ranks, int microbatches, int chunks_per_rank,
                          bool split_backward) {
  Timetable t;
  t.kind = kind;
  t.ranks = ranks;
  t.microbatches = microbatches;
  t.chunks_per_rank = chunks_per_rank;
  t.split_backward = split_backward;
  t.ops.resize(static_cast<std::size_t>(ranks));
  t.stage_of = looped_stage_map(ranks, chunks_per_rank);
  return t;
}

std::vector<std::vector<int>> v_stage_map(int ranks) {
  std::vector<std::vector<int>> map(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) map[rank] = {rank, 2 * ranks - 1 - rank};
  return map;
}

}  // namespace hetsim

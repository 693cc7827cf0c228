// Looped breadth-first pipeline (Lamy-Poirier, "Breadth-First Pipeline Parallelism", MLSys 2023):
// the looped placement of interleaved 1F1B with GPipe's order. Each rank runs every microbatch
// through chunk 0, then chunk 1, ..., then the backwards chunk by chunk from the last, each chunk's
// backwards latest microbatch first as in make_gpipe (so v = 1 gives GPipe exactly).
#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_looped_bfs(int ranks, int microbatches, int chunks_per_rank) {
  require_at_least("bfs", "pipeline ranks p", ranks, 1);
  require_at_least("bfs", "microbatches m", microbatches, 1);
  require_at_least("bfs", "chunks per rank v", chunks_per_rank, 1);
  Timetable t = empty_timetable("bfs", ranks, microbatches, chunks_per_rank, false);
  for (auto& list : t.ops) {
    list.reserve(2 * static_cast<std::size_t>(microbatches) * chunks_per_rank);
    for (int chunk = 0; chunk < chunks_per_rank; ++chunk)
      for (int mb = 0; mb < microbatches; ++mb) list.push_back(forward(mb, chunk));
    for (int chunk = chunks_per_rank - 1; chunk >= 0; --chunk)
      for (int mb = microbatches - 1; mb >= 0; --mb) list.push_back(backward(mb, chunk));
  }
  return t;
}

}  // namespace hetsim

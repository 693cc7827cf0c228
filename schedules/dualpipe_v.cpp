// DualPipeV (DeepSeek's "cut-in-half" DualPipe, after Sea AI Lab's 2024 note; github.com/
// deepseek-ai/DualPipe, dualpipev.py) in the per-rank order of its step().
//
// One direction folded into a V over p ranks: chunk 0 of rank r is stage r, chunk 1 is stage
// 2p-1-r, and every microbatch runs all 2p stages (the single default path), turning around on
// rank p-1. The eight steps are DualPipe's with p in place of p/2 and m in place of m/2. step()
// asserts m >= 2p; so does this generator (p may be odd).
#include <fmt/format.h>

#include "base/error.hpp"
#include "schedules/dualpipe_steps.hpp"
#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_dualpipe_v(int ranks, int microbatches) {
  require_at_least("dualpipev", "pipeline ranks p", ranks, 1);
  if (microbatches < 2 * ranks)
    throw PlanError(fmt::format("dualpipev needs m >= 2p = {} (got m = {}); m = {} would do",
                                2 * ranks, microbatches, 2 * ranks));
  Timetable t = empty_timetable("dualpipev", ranks, microbatches, 2, true);
  t.stage_of = v_stage_map(ranks);
  std::vector<int> microbatch_of[2];
  for (int i = 0; i < microbatches; ++i) {
    microbatch_of[0].push_back(i);
    microbatch_of[1].push_back(i);
  }
  for (int rank = 0; rank < ranks; ++rank) {
    DualPipeRankShape shape;
    shape.ranks_per_direction = ranks;
    shape.position = rank;
    shape.microbatches_per_chunk = microbatches;
    DualPipeRankOrder order = dualpipe_rank_order(shape, microbatch_of);
    t.ops[rank] = std::move(order.ops);
    t.overlapped_pairs.push_back(std::move(order.overlapped_pairs));
  }
  return t;
}

}  // namespace hetsim

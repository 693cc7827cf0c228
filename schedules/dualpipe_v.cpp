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
    shape.remote_input[0] = rank > 0;          // stage 0 takes the inputs
    shape.remote_input[1] = rank < ranks - 1;  // stage p comes from stage p-1 on this rank
    shape.remote_output[0] = rank < ranks - 1;  // stage p-1 feeds stage p on this rank
    shape.remote_output[1] = rank > 0;          // stage 2p-1 is the last
    DualPipeRankOrder order = dualpipe_rank_order(shape, microbatch_of);
    t.ops[rank] = std::move(order.ops);
    t.overlapped_pairs.push_back(std::move(order.overlapped_pairs));
    t.early_receives.push_back(std::move(order.early_receives));
    t.late_sends.push_back(std::move(order.late_sends));
  }
  return t;
}

}  // namespace hetsim

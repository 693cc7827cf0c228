// DualPipe (DeepSeek-V3 technical report, 2024; github.com/deepseek-ai/DualPipe) in the per-rank
// order of dualpipe.py's step().
//
// Two pipelines run in opposite directions over the same p ranks. Rank r holds two model slices:
// chunk 0 is slice r of the forward direction (stage r, path 0 = stages 0..p-1 on ranks 0..p-1)
// and chunk 1 is slice p-1-r of the reverse direction (stage p + (p-1-r), path 1 = stages
// p..2p-1 on ranks p-1..0), so the model's parameters are held twice. DeepSeek feeds m/2
// microbatches in at rank 0 and m/2 at rank p-1, each direction counting its own from 0; here
// the forward direction's are microbatches 0..m/2-1 and the reverse direction's m/2..m-1.
// step() asserts an even p and an even m >= 2p; so does this generator.
#include <fmt/format.h>

#include "base/error.hpp"
#include "schedules/dualpipe_steps.hpp"
#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_dualpipe(int ranks, int microbatches) {
  require_at_least("dualpipe", "pipeline ranks p", ranks, 2);
  if (ranks % 2 != 0)
    throw PlanError(
        fmt::format("dualpipe needs an even p (got {}); p = {} would do", ranks, ranks + 1));
  if (microbatches < 2 * ranks || microbatches % 2 != 0) {
    const int fix = std::max(2 * ranks, microbatches + microbatches % 2);
    throw PlanError(fmt::format(
        "dualpipe needs an even m >= 2p = {} (got m = {}); m = {} would do", 2 * ranks,
        microbatches, fix));
  }
  Timetable t = empty_timetable("dualpipe", ranks, microbatches, 2, true);
  t.stage_of = v_stage_map(ranks);  // stage p + (p-1-r) = 2p-1-r for chunk 1
  t.paths.assign(2, {});
  for (int s = 0; s < ranks; ++s) {
    t.paths[0].push_back(s);
    t.paths[1].push_back(ranks + s);
  }
  const int half = microbatches / 2;
  t.path_of_microbatch.assign(static_cast<std::size_t>(microbatches), 0);
  std::vector<int> microbatch_of[2];
  for (int i = 0; i < half; ++i) {
    microbatch_of[0].push_back(i);
    microbatch_of[1].push_back(half + i);
    t.path_of_microbatch[half + i] = 1;
  }
  for (int rank = 0; rank < ranks; ++rank) {
    DualPipeRankShape shape;
    shape.ranks_per_direction = ranks / 2;
    shape.position = std::min(rank, ranks - 1 - rank);
    shape.microbatches_per_chunk = half;
    shape.flipped = rank >= ranks / 2;
    shape.remote_input[0] = rank > 0;          // stage 0 takes the inputs
    shape.remote_input[1] = rank < ranks - 1;  // stage p takes the reverse direction's
    shape.remote_output[0] = rank < ranks - 1;  // stage p-1 ends the forward direction
    shape.remote_output[1] = rank > 0;          // stage 2p-1 ends the reverse one
    shape.middle_sends_at_once = true;
    DualPipeRankOrder order = dualpipe_rank_order(shape, microbatch_of);
    t.ops[rank] = std::move(order.ops);
    t.overlapped_pairs.push_back(std::move(order.overlapped_pairs));
    t.early_receives.push_back(std::move(order.early_receives));
    t.late_sends.push_back(std::move(order.late_sends));
  }
  return t;
}

}  // namespace hetsim

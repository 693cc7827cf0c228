#pragma once
// The per-rank op order of DeepSeek's DualPipe and DualPipeV step() (github.com/deepseek-ai/
// DualPipe, dualpipe/dualpipe.py and dualpipe/dualpipev.py), shared by both generators: the
// eight steps are the same, over half the ranks for DualPipe and all of them for DualPipeV.
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim {

struct DualPipeRankShape {
  int ranks_per_direction = 0;     // DualPipe: p/2 (num_half_ranks); DualPipeV: p
  int position = 0;                // DualPipe: min(r, p-1-r) (half_rank); DualPipeV: r
  int microbatches_per_chunk = 0;  // DualPipe: m/2 (half_num_chunks); DualPipeV: m
  bool flipped = false;            // DualPipe's second half of ranks: phase 0 is chunk 1
  // Per chunk: whether its forward input comes from another rank (not at the first stage of a
  // path, nor DualPipeV's turn on rank p-1); only those forwards post a receive.
  bool remote_input[2] = {true, true};
  // Per chunk: whether its forward output goes to another rank (not at the last stage of a
  // path, nor DualPipeV's turn on rank p-1).
  bool remote_output[2] = {true, true};
  // DualPipe's middle ranks send each F0 of step 2 at once; elsewhere it leaves after the F1
  // beside it.
  bool middle_sends_at_once = false;
};

struct DualPipeRankOrder {
  std::vector<ScheduledOp> ops;
  std::vector<int> overlapped_pairs;  // positions of the F of each overlapped (F, B) pair
  std::vector<OpLink> early_receives;  // forward inputs step() waits for ahead of their F
  std::vector<OpLink> late_sends;      // outputs step() sends after a later op
};

// Ops of one rank. `microbatch_of[chunk]` maps the chunk's running count (DeepSeek's chunk_id)
// to the timetable's microbatch index. A backward runs whole (B then W at once) unless the step
// enables zero bubble, in which case its W waits in a FIFO for the next weight step.
DualPipeRankOrder dualpipe_rank_order(const DualPipeRankShape& shape,
                                             const std::vector<int> (&microbatch_of)[2]);

}  // namespace hetsim

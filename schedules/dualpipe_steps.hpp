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
};

struct DualPipeRankOrder {
  std::vector<ScheduledOp> ops;
  std::vector<int> overlapped_pairs;  // positions of the F of each overlapped (F, B) pair
};

// Ops of one rank. `microbatch_of[chunk]` maps the chunk's running count (DeepSeek's chunk_id)
// to the timetable's microbatch index. A backward runs whole (B then W at once) unless the step
// enables zero bubble, in which case its W waits in a FIFO for the next weight step.
DualPipeRankOrder dualpipe_rank_order(const DualPipeRankShape& shape,
                                             const std::vector<int> (&microbatch_of)[2]);

}  // namespace hetsim

// ZB-V (Qi et al., ICLR 2024, Sec. 6 "Zero Bubble V"; also "Pipeline Parallelism with
// Controllable Memory", 2024) in the per-rank order of PyTorch's ScheduleZBVZeroBubble
// (torch/distributed/pipelining/schedules.py, _calculate_single_rank_operations).
//
// Two chunks per rank placed as a V: chunk 0 of rank r is stage r, chunk 1 is stage 2p-1-r, so
// the first and last stages share rank 0 and a microbatch turns around on rank p-1. The order is
// built for n = max(2p-1, m) microbatches, the fewest that fill the V, and ops of microbatches
// >= m are then dropped, as PyTorch does. Rank r runs:
//   warm-up:  2(p-r)-1 F on chunk 0; r pairs (F chunk 1, F chunk 0); p-r triples
//             (F, B, W on chunk 1);
//   steady:   while forwards remain, (F chunk 0 if any left, B and W chunk 0, F B W chunk 1);
//   cool-down: r pairs (B chunk 0, B chunk 1); p-r pairs (B chunk 0, W of the oldest chunk-0
//             backward without one); then the rest of chunk 1's W's, then chunk 0's.
// With t_F = t_B = t_W and free communication every rank is busy from its first op to its last
// for m >= 2p (the paper's zero bubble), with the peak activations of 1F1B.
#include <algorithm>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_zb_v(int ranks, int microbatches) {
  require_at_least("zb-v", "pipeline ranks p", ranks, 1);
  require_at_least("zb-v", "microbatches m", microbatches, 1);
  Timetable t = empty_timetable("zb-v", ranks, microbatches, 2, true);
  t.stage_of = v_stage_map(ranks);
  const int n = std::max(2 * ranks - 1, microbatches);
  for (int rank = 0; rank < ranks; ++rank) {
    std::vector<ScheduledOp> full;
    int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
    for (int i = 0; i < 2 * (ranks - rank) - 1; ++i) full.push_back(forward(f0++, 0));
    for (int i = 0; i < rank; ++i) {
      full.push_back(forward(f1++, 1));
      full.push_back(forward(f0++, 0));
    }
    for (int i = 0; i < ranks - rank; ++i) {
      full.push_back(forward(f1++, 1));
      full.push_back(backward(b1, 1));
      full.push_back(weight(b1++, 1));
    }
    while (f1 < f0 || f0 < n) {
      if (f0 < n) full.push_back(forward(f0++, 0));
      full.push_back(backward(b0, 0));
      full.push_back(weight(b0++, 0));
      full.push_back(forward(f1++, 1));
      full.push_back(backward(b1, 1));
      full.push_back(weight(b1++, 1));
    }
    int w0 = b0, w1 = b1;
    for (int i = 0; i < rank; ++i) {
      full.push_back(backward(b0++, 0));
      full.push_back(backward(b1++, 1));
    }
    for (int i = 0; i < ranks - rank; ++i) {
      full.push_back(backward(b0++, 0));
      full.push_back(weight(w0++, 0));
    }
    while (w1 < b1) full.push_back(weight(w1++, 1));
    while (w0 < b0) full.push_back(weight(w0++, 0));
    auto& list = t.ops[rank];
    for (const ScheduledOp& op : full)
      if (op.microbatch < microbatches) list.push_back(op);
  }
  return t;
}

}  // namespace hetsim

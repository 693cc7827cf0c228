// 1F1B / PipeDream-Flush (Narayanan et al., SC'21, Sec. 2.2) in the order of Megatron-LM's
// forward_backward_pipelining_without_interleaving (megatron/core/pipeline_parallel/schedules.py):
// rank r runs w = min(p - r - 1, m) warm-up forwards, then m - w rounds of one forward followed
// by one backward, then w cool-down backwards; forwards and backwards each go in microbatch order.
#include <algorithm>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_1f1b(int ranks, int microbatches) {
  require_at_least("1f1b", "pipeline ranks p", ranks, 1);
  require_at_least("1f1b", "microbatches m", microbatches, 1);
  Timetable t = empty_timetable("1f1b", ranks, microbatches, 1, false);
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = t.ops[rank];
    list.reserve(2 * static_cast<std::size_t>(microbatches));
    const int warmup = std::min(ranks - rank - 1, microbatches);
    int next_forward = 0;
    int next_backward = 0;
    while (next_forward < warmup) list.push_back(forward(next_forward++));
    while (next_forward < microbatches) {
      list.push_back(forward(next_forward++));
      list.push_back(backward(next_backward++));
    }
    while (next_backward < microbatches) list.push_back(backward(next_backward++));
  }
  return t;
}

}  // namespace hetsim

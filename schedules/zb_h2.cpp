// ZB-H2 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Sec. 3.2, Fig. 3 bottom):
// more memory than 1F1B bought for zero bubble. With the backward split into B and W and
// t_F = t_B = t_W = t, rank r starts at r·t; its first B can start at (2p-1-r)·t, when the first
// backward has come down from the last rank, so it fills the wait with 2(p-r)-1 warm-up
// forwards. Each later B arrives 3t after the previous one while forwards remain on the last
// rank, so the rounds are (B, W, F): m-2p+1 of them. Then the B's come every 2t for the last
// 2p-2 backwards; rank r still has 2r forwards, which go between them first, and W's fill the
// other gaps; the 2r+1 deferred W's close the list. The layout is a parallelogram: every rank is
// busy from its first op to its last, span m(t_F+t_B+t_W) = 3mt, the paper's bubble
// (p-1)(t_F+t_B-2t_W) = 0; only the first starts are staggered. Counting a forward's
// activations until its W, every rank holds at most 2p-1 microbatches (rank 0 at the end of its
// warm-up, rank r after its 2r late forwards).
#include <algorithm>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_zb_h2(int ranks, int microbatches) {
  require_at_least("zb-h2", "pipeline ranks p", ranks, 1);
  require_at_least("zb-h2", "microbatches m", microbatches, 1);
  Timetable t = empty_timetable("zb-h2", ranks, microbatches, 1, true);
  // Backwards after which a (W, F) pair fits before the next B arrives (none for m < 2p-1).
  const int steady_rounds = std::max(0, microbatches - 2 * ranks + 1);
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = t.ops[rank];
    list.reserve(3 * static_cast<std::size_t>(microbatches));
    const int warmup = std::min(2 * (ranks - rank) - 1, microbatches);
    int next_f = 0;
    int next_b = 0;
    int next_w = 0;
    while (next_f < warmup) list.push_back(forward(next_f++));
    while (next_b < microbatches) {
      const int this_b = next_b++;
      list.push_back(backward(this_b));
      if (this_b < steady_rounds) {
        list.push_back(weight(next_w++));
        if (next_f < microbatches) list.push_back(forward(next_f++));
      } else if (next_f < microbatches) {
        list.push_back(forward(next_f++));
      } else if (next_b < microbatches) {
        list.push_back(weight(next_w++));
      }
    }
    while (next_w < microbatches) list.push_back(weight(next_w++));
  }
  return t;
}

}  // namespace hetsim

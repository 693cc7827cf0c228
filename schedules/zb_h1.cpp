// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, Sec. 3.1, Fig. 3 top): 1F1B
// with the backward split into B (input gradient) and W (weight gradient). Rank r keeps 1F1B's
// min(p - r - 1, m) warm-up forwards; in the steady phase it runs F, B and then a W only once
// p - 1 forwards are ahead of the oldest pending W, so early W's are deferred; the cool-down runs
// B, W pairs and the deferred W's finish last, filling the tail bubble. The peak number of
// in-flight forwards stays at 1F1B's; the paper gives a bubble of (p-1)(t_F + t_B - t_W).
#include <algorithm>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_zb_h1(int ranks, int microbatches) {
  require_at_least("zb-h1", "pipeline ranks p", ranks, 1);
  require_at_least("zb-h1", "microbatches m", microbatches, 1);
  Timetable t = empty_timetable("zb-h1", ranks, microbatches, 1, true);
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = t.ops[rank];
    list.reserve(3 * static_cast<std::size_t>(microbatches));
    const int warmup = std::min(ranks - rank - 1, microbatches);
    int next_f = 0;
    int next_b = 0;
    int next_w = 0;
    while (next_f < warmup) list.push_back(forward(next_f++));
    while (next_f < microbatches) {
      const int this_f = next_f++;
      list.push_back(forward(this_f));
      list.push_back(backward(next_b++));
      if (this_f - next_w >= ranks - 1) list.push_back(weight(next_w++));
    }
    while (next_b < microbatches) {
      list.push_back(backward(next_b++));
      list.push_back(weight(next_w++));
    }
    while (next_w < microbatches) list.push_back(weight(next_w++));
  }
  return t;
}

}  // namespace hetsim

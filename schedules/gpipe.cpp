// GPipe (Huang et al., "GPipe", NeurIPS 2019, Fig. 2c): every rank runs all m forwards, then all
// m backwards, the latest microbatch first (its activations are the freshest and the last stage
// can start on it immediately).
#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_gpipe(int ranks, int microbatches) {
  require_at_least("gpipe", "pipeline ranks p", ranks, 1);
  require_at_least("gpipe", "microbatches m", microbatches, 1);
  Timetable t = empty_timetable("gpipe", ranks, microbatches, 1, false);
  for (auto& list : t.ops) {
    list.reserve(2 * static_cast<std::size_t>(microbatches));
    for (int mb = 0; mb < microbatches; ++mb) list.push_back(forward(mb));
    for (int mb = microbatches - 1; mb >= 0; --mb) list.push_back(backward(mb));
  }
  return t;
}

}  // namespace hetsim

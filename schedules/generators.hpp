#pragma once
// Timetable generators. Each returns a timetable that passes validate(), or throws PlanError
// naming the constraint it breaks and a value that would satisfy it.
#include "schedules/timetable.hpp"

namespace hetsim {

// GPipe (Huang et al. 2019): all forwards, then all backwards in reverse microbatch order.
Timetable make_gpipe(int ranks, int microbatches);

// 1F1B / PipeDream-Flush (Narayanan et al. 2021), in Megatron-LM's non-interleaved order:
// min(p - rank - 1, m) warm-up forwards, then one-forward-one-backward, then cool-down backwards.
Timetable make_1f1b(int ranks, int microbatches);

}  // namespace hetsim

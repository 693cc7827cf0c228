#pragma once
// The bound on what one simulated iteration may replay, checked before anything is sized by the
// plan, so that a mistyped batch size is refused at once instead of exhausting memory: by `run`
// before its replay and by `plan` before it builds a candidate's timetable.
#include "models/parallel_plan.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

// The most op runs (ops x workers) one iteration may replay: far above any real plan (the 405B
// case on 16,384 GPUs runs about 1e5), and within 1 GiB of memory. Measured: `hetsim run --tp 8
// --pp 4 --seq-length 1024` at --gbs 20000 and 80000 (240k and 960k op runs) peaks at 17 and
// 50 MiB, about 47 bytes per op run (2e7: about 0.9 GiB and 16 s).
// The timetable generators refuse beyond the same count (schedules/generators.hpp).
inline constexpr double kMaxSimulatedOps = kMaxTimetableOps;

// Throws PlanError when the plan's op runs (about three per chunk, microbatch, sequence segment
// and worker) exceed kMaxSimulatedOps.
void check_replay_size(const ParallelPlan& plan, int sequence_splits);

}  // namespace hetsim

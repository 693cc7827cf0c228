#pragma once
// Pipeline schedules drawn as SVG in the style of the pipeline-parallelism papers (zero-bubble,
// DualPipe): one row per rank, time on x, one box per op coloured by kind (F blue, B green,
// W purple, offload orange, reload yellow; odd chunks a darker shade of their kind) with the
// microbatch number inside, idle time left empty, a legend of the kinds present and a time axis.
// Offloads and reloads run beside compute, so when the schedule has any they get a thin lane
// under each rank's compute lane. Output is deterministic (fixed number formats, input order).
#include <string>
#include <vector>

#include "traces/schedule_text.hpp"  // TimedOp

namespace hetsim {

// A standalone SVG document. Op times are in seconds; the axis picks s, ms or us so that its
// numbers stay readable. Each op box carries a <title> tooltip with its kind, microbatch, chunk
// and times. Throws Error for the inputs check_timed_ops rejects.
std::string schedule_svg(const std::vector<TimedOp>& ops, int ranks, const std::string& title);

}  // namespace hetsim

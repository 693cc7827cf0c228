#pragma once
// Pipeline schedules drawn as text, one line per rank, for terminals, logs and golden tests.
// TimedOp, the input shared with schedule_svg.hpp, lives here.
#include <string>
#include <vector>

namespace hetsim {

// One op of a pipeline schedule as it ran (or is planned to run) on one rank.
struct TimedOp {
  int rank;        // pipeline rank, 0-based
  char kind;       // 'F' forward, 'B' backward (input gradient, or fused B+W), 'W' weight
                   // gradient, 'O' activation offload to host, 'R' reload from host
  int microbatch;  // 0-based
  int chunk;       // model chunk (virtual stage) on this rank: 0, or 0..v-1 when interleaved
  double start;    // seconds (or any unit, used consistently with end and time_unit)
  double end;
};

// Throws Error naming the op when ranks < 1 or an op has a rank outside [0, ranks), an unknown
// kind, a negative microbatch or chunk, or a time that is negative, non-finite or ends before
// it starts.
void check_timed_ops(const std::vector<TimedOp>& ops, int ranks);

// One line per rank, "rank R |" then one character per `time_unit` of time from 0:
//   - a cell belongs to the op running at the cell's midpoint; '.' when none (idle);
//   - an op's first cell shows its kind letter, upper case for even chunks and lower case for
//     odd chunks (so chunk 1 of an interleaved or DualPipe schedule reads "f", "b", "w"); its
//     other cells show the last digit of its microbatch number;
//   - offloads and reloads ('O', 'R') run on copy engines beside compute, so when the schedule
//     has any, each rank gets a second line "copy R |" for them;
//   - where ops on one line overlap, the one that starts first keeps the cell.
// Rank numbers are right-aligned to the widest. An op shorter than half a cell may not show:
// choose time_unit at most half the shortest op. Throws Error for time_unit <= 0 or a grid wider
// than 100000 cells.
std::string schedule_text(const std::vector<TimedOp>& ops, int ranks, double time_unit);

}  // namespace hetsim

#pragma once
// A small timing evaluator for generators and tests: every op of a kind takes the same time on
// every stage, a cross-rank dependency adds a fixed transfer time, and each rank runs its list in
// order, an op starting at max(rank free, dependencies done [+ transfer]). The full replay on a
// cluster lives in sim/; this one exists to check schedules against the papers' closed forms.
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim {

struct UniformOpTimes {
  double forward_s = 1.0;
  double backward_s = 1.0;  // input-gradient only when the timetable splits the backward
  double weight_s = 0.0;    // used only by split timetables
  double transfer_s = 0.0;  // added to every dependency that crosses ranks
};

struct TimetableTiming {
  double makespan_s = 0.0;
  std::vector<double> busy_s;  // [rank] total compute time
  // Idle time of `rank` within the makespan.
  double bubble_s(int rank) const { return makespan_s - busy_s[rank]; }
};

// Throws ScheduleError (via validate) when the timetable cannot run.
TimetableTiming evaluate(const Timetable& t, const UniformOpTimes& times);

}  // namespace hetsim

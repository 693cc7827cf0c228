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
  // One overlapped pair (F and the B beside it; see Timetable::overlapped_pairs); negative:
  // forward_s + backward_s, no gain from the overlap.
  double overlapped_s = -1.0;
};

struct TimetableTiming {
  double makespan_s = 0.0;
  std::vector<double> busy_s;   // [rank] total compute time
  std::vector<double> start_s;  // [rank] start of its first op (0 for a rank without ops)
  std::vector<double> end_s;    // [rank] end of its last op
  // Idle time of `rank` within the makespan.
  double bubble_s(int rank) const { return makespan_s - busy_s[rank]; }
  // Idle time of `rank` between its first op's start and its last op's end: the zero-bubble
  // papers' measure, which leaves out the stagger of first starts that no schedule avoids.
  double span_bubble_s(int rank) const { return end_s[rank] - start_s[rank] - busy_s[rank]; }
  // The longest single-rank span, first start to last end.
  double longest_span_s() const;
};

// Throws ScheduleError (via validate) when the timetable cannot run.
TimetableTiming evaluate(const Timetable& t, const UniformOpTimes& times);

// When a forward's activations count as freed in peak_activations.
enum class ActivationRelease {
  kAtBackward,  // at B (the input gradient needs them; W keeps only small inputs of its GEMMs)
  kAtWeight,    // at W in split timetables (the zero-bubble papers' accounting), else at B
};
// Per rank, the most forwards whose activations are alive at once, walking its list in order:
// +1 at each F, -1 at its release. Units are ops: one chunk of one microbatch (one segment
// with sequence splits); callers scale by chunk or segment size.
std::vector<int> peak_activations(const Timetable& t, ActivationRelease release);

}  // namespace hetsim

#pragma once
// A timetable replayed with abstract op times and no cluster: what `hetsim schedule` reports and
// what the closed-form tests hold against the papers. F, B and W are the times of one pipeline
// stage's ops (1/p of the model); a chunk op takes the share of them its model slice is (1/v with
// v chunks per rank on one path, all of it for DualPipe's mirrored halves, 1/k per Seq1F1B
// segment). In a timetable that does not split the backward, B runs for backward + weight. Every
// cross-rank transfer takes `transfer` time. Activations count in microbatch-stage units: a
// chunk's F holds its share until its B (or its W when split) frees it.
#include <vector>

#include "schedules/timetable.hpp"
#include "sim/pipeline_replay.hpp"
#include "sim/replay_observer.hpp"

namespace hetsim {

struct AbstractCosts {
  double forward = 1;
  double backward = 1;
  double weight = 0;
  double transfer = 0;
  double offload_fraction = 0;  // PipeOffload: share of activations sent to host memory
  double offload = 1;           // time to copy one stage's activations to or from the host
  P2pSync p2p = P2pSync::kAsync;  // what ranks wait for around their sends
};

// The three bubble definitions of the literature, each under its own name.
struct ScheduleReplay {
  double makespan = 0;
  // Megatron/GPipe: the idle share of all ranks over the makespan.
  double bubble_fraction = 0;
  std::vector<double> bubble_fraction_per_rank;
  // Zero-bubble papers: the idle share of the longest single-rank span, first op to last op.
  double bubble_span_fraction = 0;
  // DualPipe: the largest idle time of any rank between time 0 and the makespan.
  double max_rank_idle = 0;
  std::vector<double> peak_activations;     // [rank], microbatch-stage units
  std::uint64_t events = 0;
};

ScheduleReplay replay_schedule(const Timetable& timetable, const AbstractCosts& costs,
                               ReplayObserver* observer = nullptr);

}  // namespace hetsim

#include "sim/abstract_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "models/chunk_cost.hpp"
#include "sim/pipeline_replay.hpp"

namespace hetsim {

namespace {

// The longest abstract op time: 10^6 (seconds or any unit), so that sums over the timetable's
// at most kMaxTimetableOps ops stay far inside a double's range (1e308 each used to overflow
// the makespan to infinity and fail a check that named no flag).
constexpr double kMaxOpTime = 1e6;

// Op times come from the command line as they are, so each is named by its flag.
void require_time(const char* flag, double value, bool zero_allowed) {
  if (value <= kMaxOpTime && (value > 0 || (zero_allowed && value == 0))) return;
  throw PlanError(fmt::format("{} is {}; expected a finite time {} 0 and at most {:g}", flag, value,
                              zero_allowed ? ">=" : ">", kMaxOpTime));
}

}  // namespace

ScheduleReplay replay_schedule(const Timetable& timetable, const AbstractCosts& costs,
                               ReplayObserver* observer) {
  require_time("--f (forward time)", costs.forward, false);
  require_time("--b (backward time)", costs.backward, false);
  require_time("--w (weight-gradient time)", costs.weight, true);
  require_time("--comm (transfer time)", costs.transfer, true);
  require_time("--offload-time", costs.offload, false);
  if (timetable.split_backward && !(costs.weight > 0))
    throw PlanError("the " + timetable.kind + " timetable splits the backward into B and W: give W > 0");
  // A chunk op covers one slice of the model: 1/v of a stage when a microbatch's path visits
  // p*v stages (looped, V-shape), a whole stage when it visits p (DualPipe's mirrored halves);
  // a Seq1F1B segment is 1/k of that.
  const double path_length = timetable.paths.empty() ? timetable.stages()
                                                     : static_cast<double>(timetable.paths.front().size());
  const double share = timetable.ranks / path_length / timetable.sequence_splits;
  ChunkCost chunk;
  chunk.forward_s = costs.forward * share;
  chunk.backward_input_s = costs.backward * share;
  chunk.backward_weight_s = costs.weight * share;
  chunk.activation_bytes = share;
  chunk.weight_grad_bytes = timetable.split_backward ? share : 0;

  ReplayInputs inputs;
  inputs.timetable = &timetable;
  inputs.replicas = 1;
  inputs.costs.assign(static_cast<std::size_t>(timetable.ranks),
                      std::vector<ChunkCost>(static_cast<std::size_t>(timetable.chunks_per_rank), chunk));
  inputs.abstract_transfer_s = costs.transfer;
  inputs.offload_fraction = costs.offload_fraction;
  inputs.p2p = costs.p2p;
  if (costs.offload_fraction > 0) {
    if (!(costs.offload > 0)) throw PlanError("offloading needs a copy time > 0");
    // Activations count in stage units, so one stage's activations take `offload`.
    inputs.host_copy_bytes_per_s.assign(static_cast<std::size_t>(timetable.ranks), 1 / costs.offload);
  }
  inputs.observer = observer;
  const ReplayStats stats = replay_iteration(inputs);

  ScheduleReplay result;
  result.makespan = stats.pipeline_end_s;
  result.events = stats.events;
  result.peak_activations = stats.peak_activation_bytes;
  double longest_span = -1;
  for (int r = 0; r < timetable.ranks; ++r) {
    const double idle = 1 - stats.busy_s[r] / result.makespan;
    result.bubble_fraction_per_rank.push_back(idle);
    result.bubble_fraction += idle / timetable.ranks;
    result.max_rank_idle = std::max(result.max_rank_idle, result.makespan - stats.busy_s[r]);
    const double span = stats.last_op_end_s[r] - stats.first_op_start_s[r];
    if (span > longest_span) {
      longest_span = span;
      result.bubble_span_fraction = (span - stats.busy_s[r]) / span;
    }
  }
  return result;
}

}  // namespace hetsim

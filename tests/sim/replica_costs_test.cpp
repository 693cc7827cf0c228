// The replay lets replicas of a rank with equal costs read one shared row; a replica whose costs
// differ (another GPU type, a slower site) must still run at its own. GPipe on p = 2 ranks with m
// microbatches, abstract transfers: worker w computes m (f_w + b_w) whatever waits it meets, so
// each worker's busy time names the costs it ran with.
#include <doctest/doctest.h>

#include <vector>

#include "schedules/generators.hpp"
#include "sim/pipeline_replay.hpp"

using namespace hetsim;

namespace {

ChunkCost op_times(double forward_s, double backward_s) {
  ChunkCost cost;
  cost.forward_s = forward_s;
  cost.backward_input_s = backward_s;
  cost.output_bytes = 1e6;
  return cost;
}

}  // namespace

TEST_CASE("each replica of a rank computes at its own costs, shared or not") {
  constexpr int kMicrobatches = 4;
  const Timetable timetable = make_gpipe(2, kMicrobatches);
  const ChunkCost fast = op_times(1e-3, 2e-3);
  const ChunkCost slow = op_times(3e-3, 5e-3);
  ReplayInputs inputs;
  inputs.timetable = &timetable;
  inputs.replicas = 4;
  inputs.abstract_transfer_s = 1e-4;
  // Worker = replica * 2 + rank. Replicas 0, 1 and 3 run fast; replica 2 runs slow on rank 0
  // only, so it differs from the replica before it on one rank and equals it on the other, and
  // replica 3 equals replica 1 but not the replica just before it.
  inputs.costs = {{fast}, {fast}, {fast}, {fast}, {slow}, {fast}, {fast}, {fast}};
  const ReplayStats stats = replay_iteration(inputs);
  REQUIRE(stats.busy_s.size() == 8);
  for (std::size_t worker = 0; worker < 8; ++worker) {
    const ChunkCost& cost = inputs.costs[worker][0];
    CAPTURE(worker);
    CHECK(stats.busy_s[worker] ==
          doctest::Approx(kMicrobatches * (cost.forward_s + cost.fused_backward_s())).epsilon(1e-12));
  }
}

TEST_CASE("a replay given costs for the wrong number of workers says so") {
  const Timetable timetable = make_gpipe(2, 2);
  ReplayInputs inputs;
  inputs.timetable = &timetable;
  inputs.replicas = 2;
  inputs.costs.assign(3, {op_times(1e-3, 2e-3)});
  CHECK_THROWS_WITH_AS(replay_iteration(inputs), "the replay needs the costs of 4 workers, got 3",
                       SimulationError);
}

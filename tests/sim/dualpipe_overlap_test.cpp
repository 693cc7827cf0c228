// DualPipe overlaps each pair's forward and backward (DeepSeek-V3 report, section 3.2.1, Figure
// 4): their expert-parallel all-to-alls run beside the other op's compute, on 20 of 132 SMs.
// A pair with compute P and all-to-alls C takes max(C, P + 20/132 C); without all-to-alls it is
// F + B as before.
#include <doctest/doctest.h>

#include <vector>

#include "schedules/generators.hpp"
#include "sim/pipeline_replay.hpp"

using namespace hetsim;

namespace {

struct OpTimes : ReplayObserver {
  std::vector<std::vector<ComputeRecord>> of_worker;
  explicit OpTimes(int workers) : of_worker(static_cast<std::size_t>(workers)) {}
  void on_compute(const ComputeRecord& r) override { of_worker[r.worker].push_back(r); }
};

// Every chunk op: F 1 s and B 1 s, each with `all_to_all` s of it in all-to-alls; W 0.5 s.
OpTimes replay_dualpipe(const Timetable& t, double all_to_all) {
  ChunkCost chunk;
  chunk.forward_s = 1;
  chunk.backward_input_s = 1;
  chunk.backward_weight_s = 0.5;
  chunk.ep_comm_forward_s = all_to_all;
  chunk.ep_comm_backward_s = all_to_all;
  chunk.activation_bytes = 1;
  chunk.weight_grad_bytes = 0.5;
  ReplayInputs inputs;
  inputs.timetable = &t;
  inputs.replicas = 1;
  inputs.costs.assign(static_cast<std::size_t>(t.ranks),
                      std::vector<ChunkCost>(static_cast<std::size_t>(t.chunks_per_rank), chunk));
  OpTimes times(t.ranks);
  inputs.observer = &times;
  replay_iteration(inputs);
  return times;
}

// Start of a pair's first op to the end of its second, for every pair of every rank.
std::vector<double> pair_spans(const Timetable& t, const OpTimes& times) {
  std::vector<double> spans;
  for (int rank = 0; rank < t.ranks; ++rank)
    for (const int first : t.overlapped_pairs[rank])
      spans.push_back(times.of_worker[rank][first + 1].end_s - times.of_worker[rank][first].start_s);
  return spans;
}

}  // namespace

TEST_CASE("a DualPipe pair hides its all-to-alls behind the other op's compute, on 112 of 132 SMs") {
  const Timetable t = make_dualpipe(4, 8);
  REQUIRE(!t.overlapped_pairs.empty());
  // F + B = 2 s with 0.4 s of all-to-alls each: P = 1.2 s, C = 0.8 s.
  const std::vector<double> hidden = pair_spans(t, replay_dualpipe(t, 0.4));
  REQUIRE(!hidden.empty());
  for (const double span : hidden) CHECK(span == doctest::Approx(1.2 + 20.0 / 132 * 0.8).epsilon(1e-12));
  // All-to-alls longer than the compute: the pair lasts as long as they do.
  for (const double span : pair_spans(t, replay_dualpipe(t, 0.9))) CHECK(span == doctest::Approx(1.8).epsilon(1e-12));
  // No all-to-alls: F then B, 2 s, as before.
  for (const double span : pair_spans(t, replay_dualpipe(t, 0))) CHECK(span == doctest::Approx(2.0).epsilon(1e-12));
}

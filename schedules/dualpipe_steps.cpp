#include "schedules/dualpipe_steps.hpp"

#include <deque>

#include "schedules/generator_support.hpp"

namespace hetsim {

namespace {

// Replays step()'s compute calls for one rank. DeepSeek calls them with a phase; the module
// (our chunk) is phase XOR is_in_second_half, and each module counts its forwards and
// backwards separately.
class StepRecorder {
 public:
  StepRecorder(bool flipped, const std::vector<int> (&microbatch_of)[2])
      : flipped_(flipped), microbatch_of_(microbatch_of) {}

  void forward(int phase) {
    const int chunk = phase ^ static_cast<int>(flipped_);
    ops_.push_back(hetsim::forward(microbatch_of_[chunk][forwards_[chunk]++], chunk));
  }
  void backward(int phase, bool zero_bubble) {
    const int chunk = phase ^ static_cast<int>(flipped_);
    const int mb = microbatch_of_[chunk][backwards_[chunk]++];
    ops_.push_back(hetsim::backward(mb, chunk));
    if (zero_bubble) {
      deferred_.push_back(hetsim::weight(mb, chunk));
    } else {
      ops_.push_back(hetsim::weight(mb, chunk));
    }
  }
  // _forward_backward_chunk: F of phase0 and the whole B of phase1, overlapped.
  void forward_backward(int phase0, int phase1) {
    pairs_.push_back(static_cast<int>(ops_.size()));
    forward(phase0);
    backward(phase1, false);
  }
  // WeightGradStore.pop(): the oldest deferred weight gradient.
  void weight() {
    ops_.push_back(deferred_.front());
    deferred_.pop_front();
  }
  DualPipeRankOrder take() { return {std::move(ops_), std::move(pairs_)}; }

 private:
  bool flipped_;
  const std::vector<int> (&microbatch_of_)[2];
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<ScheduledOp> deferred_;
  std::vector<ScheduledOp> ops_;
  std::vector<int> pairs_;
};

}  // namespace

DualPipeRankOrder dualpipe_rank_order(const DualPipeRankShape& shape,
                                             const std::vector<int> (&microbatch_of)[2]) {
  StepRecorder run(shape.flipped, microbatch_of);
  const int half = shape.ranks_per_direction;
  const int at = shape.position;
  // Step 1, nF0: fill this direction's pipeline ahead of the other.
  for (int i = 0; i < (half - at - 1) * 2; ++i) run.forward(0);
  // Step 2, nF0F1.
  for (int i = 0; i < at + 1; ++i) {
    run.forward(0);
    run.forward(1);
  }
  // Step 3, nB1W1F1, zero bubble: the W runs right after its B, but from the store.
  for (int i = 0; i < half - at - 1; ++i) {
    run.backward(1, true);
    run.weight();
    run.forward(1);
  }
  // Step 4, nF0B1F1B0: overlapped pairs, each F with the other direction's whole B; the middle
  // ranks (the last of each direction) run their first pair apart, which shortens the bubble.
  for (int i = 0; i < shape.microbatches_per_chunk - 2 * half + at + 1; ++i) {
    if (i == 0 && at == half - 1) {
      run.forward(0);
      run.backward(1, false);
    } else {
      run.forward_backward(0, 1);
    }
    run.forward_backward(1, 0);
  }
  // Step 5, nB1F1B0.
  for (int i = 0; i < half - at - 1; ++i) {
    run.backward(1, false);
    run.forward_backward(1, 0);
  }
  // Step 6, nB1B0: from the middle iteration on, backwards leave their W for later; which of
  // the two backwards switches first depends on the parity of the position.
  const int step_6 = at + 1;
  bool zero_bubble = false;
  for (int i = 0; i < step_6; ++i) {
    if (i == step_6 / 2 && at % 2 == 1) zero_bubble = true;
    run.backward(1, zero_bubble);
    if (i == step_6 / 2 && at % 2 == 0) zero_bubble = true;
    run.backward(0, zero_bubble);
  }
  // Step 7, nWB0.
  for (int i = 0; i < half - at - 1; ++i) {
    run.weight();
    run.backward(0, true);
  }
  // Step 8, nW: the store drains.
  for (int i = 0; i < at + 1; ++i) run.weight();
  return run.take();
}

}  // namespace hetsim

#include "schedules/dualpipe_steps.hpp"

#include <algorithm>
#include <deque>

#include "schedules/generator_support.hpp"

namespace hetsim {

namespace {

// Replays step()'s compute calls for one rank. DeepSeek calls them with a phase; the module
// (our chunk) is phase XOR is_in_second_half, and each module counts its forwards and
// backwards separately.
class StepRecorder {
 public:
  StepRecorder(const DualPipeRankShape& shape, const std::vector<int> (&microbatch_of)[2])
      : shape_(shape), microbatch_of_(microbatch_of) {}

  void forward(int phase) {
    const int chunk = phase ^ static_cast<int>(shape_.flipped);
    const int position = static_cast<int>(ops_.size());
    // The op that committed this forward's receive, when that was an earlier one, waited for it.
    if (const int waiter = posted_at_[chunk]; waiter >= 0 && waiter < position)
      early_.push_back({waiter, position});
    posted_at_[chunk] = -1;
    ops_.push_back(hetsim::forward(microbatch_of_[chunk][forwards_[chunk]++], chunk));
  }
  // _recv_forward(phase) called on its own: the receive for the next forward of `phase` is posted
  // now, and the _commit_and_wait_comm in front of the next compute call waits for it.
  void receive_forward_ahead(int phase) {
    const int chunk = phase ^ static_cast<int>(shape_.flipped);
    if (shape_.remote_input[chunk]) posted_at_[chunk] = static_cast<int>(ops_.size());
  }
  // A whole backward computes its weight gradients in the same call and sends its input
  // gradient after them.
  void backward(int phase, bool zero_bubble) {
    const int chunk = phase ^ static_cast<int>(shape_.flipped);
    const int mb = microbatch_of_[chunk][backwards_[chunk]++];
    ops_.push_back(hetsim::backward(mb, chunk));
    if (zero_bubble) {
      deferred_.push_back(hetsim::weight(mb, chunk));
    } else {
      ops_.push_back(hetsim::weight(mb, chunk));
      send_after(last() - 1, last());
    }
  }
  // _forward_backward_chunk: F of phase0 and the whole B of phase1, overlapped; both outputs
  // leave after the call, weight gradients included.
  void forward_backward(int phase0, int phase1) {
    pairs_.push_back(static_cast<int>(ops_.size()));
    forward(phase0);
    backward(phase1, false);
    send_after(last() - 2, last());
  }
  int last() const { return static_cast<int>(ops_.size()) - 1; }
  // The output of the op at `position` goes out once the op at `after` is done (when it goes to
  // another rank at all: a forward's to the next stage, a backward's to the previous one).
  void send_after(int position, int after) {
    const ScheduledOp& op = ops_[position];
    const bool remote = op.kind == OpKind::kForward ? shape_.remote_output[op.chunk]
                                                    : shape_.remote_input[op.chunk];
    if (remote && after > position) late_.push_back({position, after});
  }
  // WeightGradStore.pop(): the oldest deferred weight gradient.
  void weight() {
    ops_.push_back(deferred_.front());
    deferred_.pop_front();
  }
  DualPipeRankOrder take() {
    // Recorded as the later op runs; the timetable lists them by their first op.
    for (auto* links : {&early_, &late_})
      std::sort(links->begin(), links->end(),
                [](const OpLink& a, const OpLink& b) { return a.first < b.first; });
    return {std::move(ops_), std::move(pairs_), std::move(early_), std::move(late_)};
  }

 private:
  const DualPipeRankShape& shape_;
  const std::vector<int> (&microbatch_of_)[2];
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<ScheduledOp> deferred_;
  std::vector<ScheduledOp> ops_;
  std::vector<int> pairs_;
  int posted_at_[2] = {-1, -1};  // per chunk: where the pending early receive is committed
  std::vector<OpLink> early_;
  std::vector<OpLink> late_;
};

}  // namespace

DualPipeRankOrder dualpipe_rank_order(const DualPipeRankShape& shape,
                                             const std::vector<int> (&microbatch_of)[2]) {
  StepRecorder run(shape, microbatch_of);
  const int half = shape.ranks_per_direction;
  const int at = shape.position;
  // Step 1, nF0: fill this direction's pipeline ahead of the other.
  for (int i = 0; i < (half - at - 1) * 2; ++i) run.forward(0);
  // Step 2, nF0F1. Each F0's input is received ahead, with the F1 before it (the first with
  // itself), so every F1 here also waits for the next F0's input.
  // Each F0's output leaves after the F1 beside it (at once on DualPipe's middle ranks); on the
  // middle ranks (DualPipeV: the last) the last F1's waits for step 4's first F0.
  const bool middle = at == half - 1;
  int held_f1 = -1;
  run.receive_forward_ahead(0);
  for (int i = 0; i < at + 1; ++i) {
    run.forward(0);
    run.receive_forward_ahead(0);
    run.forward(1);
    if (!(middle && shape.middle_sends_at_once)) run.send_after(run.last() - 1, run.last());
    if (middle && i == at) held_f1 = run.last();
  }
  // Step 3, nB1W1F1, zero bubble: the W runs right after its B, but from the store, and waits
  // for the input of the F1 after it, whose receive is posted before it.
  for (int i = 0; i < half - at - 1; ++i) {
    run.backward(1, true);
    run.receive_forward_ahead(1);
    run.weight();
    run.forward(1);
  }
  // Step 4, nF0B1F1B0: overlapped pairs, each F with the other direction's whole B; the middle
  // ranks (the last of each direction) run their first pair apart, which shortens the bubble.
  for (int i = 0; i < shape.microbatches_per_chunk - 2 * half + at + 1; ++i) {
    if (i == 0 && middle) {
      run.forward(0);
      run.send_after(held_f1, run.last());
      const int f0 = run.last();
      run.backward(1, false);
      run.send_after(f0, run.last());  // after the backward's weight gradients
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

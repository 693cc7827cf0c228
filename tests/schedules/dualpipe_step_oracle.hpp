#pragma once
// The rank state both DualPipe oracles replay DeepSeek's step() calls on (dualpipe/dualpipe.py
// and dualpipev.py share these helpers): the compute calls (_forward_chunk, _backward_chunk,
// _forward_backward_chunk, _weight_chunk) with WeightGradStore as a real FIFO, the receives
// _recv_forward posts and _commit_and_wait_comm waits for, and the sends, recorded as the
// timetable's ops, overlapped pairs, early receives and late sends. What differs between the two
// reference schedules is given to the constructor: which module a phase runs, how a module's k-th
// microbatch is numbered, and which modules receive and send across ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim::testing {

struct RankRun {
  std::vector<ScheduledOp> ops;
  std::vector<int> pairs;
  std::vector<OpLink> early;
  std::vector<OpLink> late;
};

// How one rank of a reference schedule is laid out.
struct StepRankShape {
  int microbatches_per_module = 0;   // forwards (and backwards) each module runs
  bool phases_swapped = false;       // the module a phase runs is phase XOR this
  int module1_first_microbatch = 0;  // module 1's k-th microbatch is this + k (module 0's is k)
  bool remote_input[2] = {false, false};   // module 0 / 1's forward input comes from another rank
  bool remote_output[2] = {false, false};  // module 0 / 1's forward output goes to another rank
};

class StepOracleRank {
 public:
  explicit StepOracleRank(const StepRankShape& shape) : shape_(shape) {}

  void recv_forward(int phase) {
    const int module = module_of(phase);
    if (shape_.remote_input[module]) posted_.push_back({module, -1});
  }
  void send_forward(int phase) {
    const int module = module_of(phase);
    if (shape_.remote_output[module]) post_send(f_at_[module][sent_f_[module]++]);
  }
  void send_backward(int phase) {
    const int module = module_of(phase);
    if (shape_.remote_input[module]) post_send(b_at_[module][sent_b_[module]++]);
  }
  void forward_chunk(int phase, bool recv = true, bool send = true) {
    if (recv) recv_forward(phase);
    commit();
    forward_compute(phase);
    if (send) send_forward(phase);
  }
  void backward_chunk(int phase, bool enable_zb = false, bool send = true) {
    commit();
    backward_compute(phase, enable_zb);
    if (send) send_backward(phase);
  }
  void forward_backward_chunk(int phase0, int phase1, bool recv0 = true) {
    if (recv0) recv_forward(phase0);
    commit();
    run_.pairs.push_back(static_cast<int>(run_.ops.size()));
    forward_compute(phase0);
    backward_compute(phase1, false);
    send_forward(phase0);
    send_backward(phase1);
  }
  void weight_chunk() {
    commit();
    REQUIRE_MESSAGE(!store_.empty(), "Pop empty queue.");
    for (const ScheduledOp& op : store_.front()) run_.ops.push_back(op);
    store_.pop_front();
  }
  bool store_empty() const { return store_.empty(); }
  RankRun take() {
    for (auto* links : {&run_.early, &run_.late})
      std::sort(links->begin(), links->end(), [](const OpLink& a, const OpLink& b) { return a.first < b.first; });
    return std::move(run_);
  }

 private:
  struct Posted {
    int module;
    int committed_at;  // position of the op whose commit waited for it; -1: not yet
  };
  int module_of(int phase) const { return phase ^ static_cast<int>(shape_.phases_swapped); }
  int microbatch(int module, int k) const { return module == 0 ? k : shape_.module1_first_microbatch + k; }
  void post_send(int position) {
    const int last = static_cast<int>(run_.ops.size()) - 1;
    if (last > position) run_.late.push_back({position, last});
  }
  void commit() {
    for (Posted& r : posted_)
      if (r.committed_at < 0) r.committed_at = static_cast<int>(run_.ops.size());
  }
  void forward_compute(int phase) {
    const int module = module_of(phase);
    const auto it = std::find_if(posted_.begin(), posted_.end(), [&](const Posted& r) { return r.module == module; });
    if (it != posted_.end()) {
      if (it->committed_at < static_cast<int>(run_.ops.size()))
        run_.early.push_back({it->committed_at, static_cast<int>(run_.ops.size())});
      posted_.erase(it);
    }
    const int k = f_count_[module]++;
    REQUIRE(k < shape_.microbatches_per_module);
    f_at_[module].push_back(static_cast<int>(run_.ops.size()));
    run_.ops.push_back({OpKind::kForward, microbatch(module, k), module});
  }
  void backward_compute(int phase, bool enable_zb) {
    const int module = module_of(phase);
    const int k = b_count_[module]++;
    REQUIRE(k < f_count_[module]);
    const int mb = microbatch(module, k);
    b_at_[module].push_back(static_cast<int>(run_.ops.size()));
    run_.ops.push_back({OpKind::kBackward, mb, module});
    const ScheduledOp w{OpKind::kWeight, mb, module};
    if (enable_zb)
      store_.push_back({w});  // cache, then flush: one FIFO entry
    else
      run_.ops.push_back(w);  // weight gradients computed inside the backward
  }

  StepRankShape shape_;
  std::vector<int> f_at_[2], b_at_[2];  // positions of each module's forwards and backwards
  int sent_f_[2] = {0, 0};
  int sent_b_[2] = {0, 0};
  std::vector<Posted> posted_;
  int f_count_[2] = {0, 0};
  int b_count_[2] = {0, 0};
  std::deque<std::vector<ScheduledOp>> store_;
  RankRun run_;
};

}  // namespace hetsim::testing

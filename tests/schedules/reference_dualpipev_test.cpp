// Oracle for make_dualpipe_v: DeepSeek's DualPipeV order, re-expressed here from
//   deepseek-ai/DualPipe, dualpipe/dualpipev.py: DualPipeV.step() and the compute helpers it calls
//   (_forward_chunk, _backward_chunk, _forward_backward_chunk, _weight_chunk and their
//   *_compute_chunk bodies), with dualpipe/utils.py's WeightGradStore. (The stored copy read was a
//   fork of that repository with the same step(); PyTorch's ScheduleDualPipeV in
//   torch/distributed/pipelining/schedules.py, a port of it, emits the same step sequence.)
//
// What the reference does on rank r of p (num_ranks), m microbatches (num_chunks):
//   * it asserts m > 0 and m >= 2p (no parity condition, any p >= 1);
//   * phase 0 is the module holding stage r (inputs enter at rank 0, the output of rank p-1's
//     phase 0 becomes the input of its phase 1), phase 1 the module holding stage 2p-1-r, whose
//     last stage (the loss) is on rank 0; there is no XOR, the phase is the module;
//   * each module counts its forwards and backwards (current_f_chunk_id, current_b_chunk_id);
//   * a backward with enable_zb leaves its weight gradients in the store's FIFO as one entry, one
//     without runs them inside; _weight_chunk pops the oldest entry (asserting there is one);
//   * _forward_backward_chunk(a, b) is one overlapped unit: forward of a, backward of b;
//   * steps: 1) 2(p-r-1) x F(0); 2) r+1 x [F(0), F(1)]; 3) p-r-1 x [B(1, zb), W, F(1)];
//     4) m-2p+r+1 x [first iteration on the last rank: F(0) then B(1) apart, else FB(0, 1); then
//     FB(1, 0)]; 5) p-r-1 x [B(1), FB(1, 0)]; 6) r+1 x [B(1), B(0)], zero bubble switched on at
//     iteration (r+1)/2 before B(1) when r is odd, between B(1) and B(0) when r is even;
//     7) p-r-1 x [W, B(0, zb)]; 8) r+1 x W; then the store must be empty.
// The oracle below replays those calls with the store as a real FIFO.
//
// Numbering: our chunk is the module (phase): chunk 0 of rank r is stage r, chunk 1 is stage
// 2p-1-r (the V placement; one path 0..2p-1). The module's k-th microbatch is our microbatch k.
// A backward without zero bubble is B followed at once by its W; a zero-bubble backward is B now
// and W at the _weight_chunk that pops it. Each _forward_backward_chunk is an overlapped pair at
// the position of its F.
//
// Receives: _recv_forward(phase) posts the receive of the module's next forward input (none for
// module 0 on rank 0, where inputs enter, nor for module 1 on rank p-1, fed by its own module 0),
// and every compute call first runs _commit_and_wait_comm, which waits for every receive posted
// so far. A forward whose receive was committed by an earlier compute call is an early receive
// [that call's op, the forward].
//
// Sends: _send_forward / _send_backward post the module's next output (none at a direction's
// last stage, nor where the V turns on rank p-1); an output posted after a later op ran (the
// weight gradients of a whole backward, computed inside it; a forward held back by send=False)
// is a late send [the op, the last op run when it was posted].
#include <doctest/doctest.h>

#include <optional>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "dualpipe_step_oracle.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

namespace {

using hetsim::OpKind;
using hetsim::ScheduledOp;
using hetsim::testing::RankRun;
using hetsim::testing::StepOracleRank;

// DualPipeV.step() for every rank; nullopt where it asserts.
std::optional<std::vector<RankRun>> dualpipev_step(int p, int m) {
  if (!(m > 0 && m >= 2 * p)) return std::nullopt;
  std::vector<RankRun> out;
  for (int rank = 0; rank < p; ++rank) {
    const bool is_last_rank = rank == p - 1;
    // The phase is the module; each module runs all m microbatches.
    StepOracleRank r({m, false, 0, {rank > 0, rank < p - 1}, {rank < p - 1, rank > 0}});

    for (int i = 0; i < (p - rank - 1) * 2; ++i) r.forward_chunk(0);
    r.recv_forward(0);
    for (int i = 0; i < rank + 1; ++i) {
      r.forward_chunk(0, false, false);
      r.recv_forward(0);
      r.forward_chunk(1, true, !is_last_rank || i < rank);
      r.send_forward(0);
    }
    for (int i = 0; i < p - rank - 1; ++i) {
      r.backward_chunk(1, true);
      r.recv_forward(1);
      r.weight_chunk();
      r.forward_chunk(1, false);
    }
    for (int i = 0; i < m - 2 * p + rank + 1; ++i) {
      if (i == 0 && is_last_rank) {
        r.forward_chunk(0, false, false);
        r.send_forward(1);
        r.backward_chunk(1, false, false);
        r.send_forward(0);
        r.send_backward(1);
      } else {
        r.forward_backward_chunk(0, 1, i > 0);
      }
      r.forward_backward_chunk(1, 0);
    }
    for (int i = 0; i < p - rank - 1; ++i) {
      r.backward_chunk(1);
      r.forward_backward_chunk(1, 0);
    }
    const int step_6 = rank + 1;
    bool enable_zb = false;
    for (int i = 0; i < step_6; ++i) {
      if (i == step_6 / 2 && rank % 2 == 1) enable_zb = true;
      r.backward_chunk(1, enable_zb);
      if (i == step_6 / 2 && rank % 2 == 0) enable_zb = true;
      r.backward_chunk(0, enable_zb);
    }
    for (int i = 0; i < p - rank - 1; ++i) {
      r.weight_chunk();
      r.backward_chunk(0, true);
    }
    for (int i = 0; i < rank + 1; ++i) r.weight_chunk();
    REQUIRE(r.store_empty());
    out.push_back(r.take());
  }
  return out;
}

}  // namespace

TEST_CASE("make_dualpipe_v equals DeepSeek's DualPipeV.step() per-rank order over the grid") {
  int compared = 0, rejected = 0;
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 4 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto expected = dualpipev_step(p, m);
      std::optional<hetsim::Timetable> actual;
      try {
        actual = hetsim::make_dualpipe_v(p, m);
      } catch (const hetsim::PlanError&) {
      }
      REQUIRE(expected.has_value() == actual.has_value());
      if (!expected) {
        ++rejected;
        continue;
      }
      ++compared;
      const hetsim::Timetable& t = *actual;
      REQUIRE(t.ranks == p);
      REQUIRE(t.microbatches == m);
      REQUIRE(t.chunks_per_rank == 2);
      REQUIRE(t.split_backward);
      CHECK(t.paths.empty());  // one path through stages 0..2p-1
      for (int rank = 0; rank < p; ++rank) {
        CAPTURE(rank);
        REQUIRE(t.stage_of[rank] == std::vector<int>{rank, 2 * p - 1 - rank});
        REQUIRE(t.ops[rank] == (*expected)[rank].ops);
        REQUIRE(t.overlapped_pairs[rank] == (*expected)[rank].pairs);
        REQUIRE(t.early_receives[rank] == (*expected)[rank].early);
        REQUIRE(t.late_sends[rank] == (*expected)[rank].late);
      }
    }
  // Accepted: m in [2p, 4p], 2p+1 values per p; rejected: m < 2p, 2p-1 values per p.
  CHECK(compared == 80);
  CHECK(rejected == 64);
}

TEST_CASE("dualpipev oracle orders are runnable") {
  for (int p = 1; p <= 8; ++p)
    for (int m = 2 * p; m <= 4 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto runs = dualpipev_step(p, m);
      REQUIRE(runs);
      hetsim::Timetable t = hetsim::make_dualpipe_v(p, m);
      for (int rank = 0; rank < p; ++rank) {
        t.ops[rank] = (*runs)[rank].ops;
        t.overlapped_pairs[rank] = (*runs)[rank].pairs;
        t.early_receives[rank] = (*runs)[rank].early;
        t.late_sends[rank] = (*runs)[rank].late;
      }
      REQUIRE_NOTHROW(hetsim::validate(t));
    }
}

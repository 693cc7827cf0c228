// Oracle for make_dualpipe: DeepSeek's DualPipe order, re-expressed here from
//   deepseek-ai/DualPipe, dualpipe/dualpipe.py: DualPipe.step() and the compute helpers it calls
//   (_forward_chunk, _backward_chunk, _forward_backward_chunk, _weight_chunk and their
//   *_compute_chunk bodies), with dualpipe/utils.py's WeightGradStore.
//
// What the reference does on rank r of p (num_ranks), m microbatches (num_chunks):
//   * it asserts p even and m > 0, m even, m >= 2p; half = p/2 (num_half_ranks),
//     h = min(r, p-1-r) (half_rank), n = m/2 (half_num_chunks), middle = (r == p/2-1 or p/2);
//   * every call names a phase; the module it runs is phase XOR (r >= p/2), and each module counts
//     its forwards and backwards separately (current_f_chunk_id, current_b_chunk_id): that count is
//     the microbatch within the module's direction;
//   * a backward with enable_zb leaves its weight gradients in the store's cache and flushes them
//     into a FIFO as one entry; without it the weight gradients run inside the backward;
//     _weight_chunk pops the oldest entry (asserting there is one);
//   * _forward_backward_chunk(a, b) runs the forward of phase a and the backward of phase b as one
//     overlapped unit (zero bubble off);
//   * steps: 1) 2(half-h-1) x F(0); 2) h+1 x [F(0), F(1)]; 3) half-h-1 x [B(1, zb), W, F(1)];
//     4) n-p+h+1 x [first iteration on a middle rank: F(0) then B(1) apart, else FB(0, 1);
//     then FB(1, 0)]; 5) half-h-1 x [B(1), FB(1, 0)]; 6) h+1 x [B(1), B(0)], zero bubble switched
//     on at iteration (h+1)/2 before B(1) when h is odd, between B(1) and B(0) when h is even;
//     7) half-h-1 x [W, B(0, zb)]; 8) h+1 x W; then the store must be empty.
// The oracle below replays those calls with the store as a real FIFO.
//
// Numbering: module 0 is the direction whose inputs enter at rank 0 (its last stage is rank p-1),
// module 1 the direction entering at rank p-1 (last stage rank 0). Our chunk is the module; chunk 0
// of rank r is stage r (path 0 = stages 0..p-1), chunk 1 of rank r is stage p + (p-1-r) (path 1 =
// stages p..2p-1, visiting ranks p-1..0). The module's k-th microbatch is our microbatch k for
// module 0 and m/2 + k for module 1. A backward without zero bubble is our B immediately followed
// by its W; a zero-bubble backward is B now and W at the _weight_chunk that pops it. Each
// _forward_backward_chunk is an overlapped pair at the position of its F.
//
// Receives: _recv_forward(phase) posts the receive of the module's next forward input (none at
// the first stage of a direction: module 0 on rank 0, module 1 on rank p-1), and every compute
// call (_forward_chunk, _backward_chunk, _forward_backward_chunk, _weight_chunk) first runs
// _commit_and_wait_comm, which waits for every receive posted so far. A forward whose receive
// was committed by an earlier compute call is an early receive [that call's op, the forward].
//
// Sends: _send_forward / _send_backward post the module's next output (none at a direction's
// last stage); an output posted after a later op ran (the
// weight gradients of a whole backward, computed inside it; a forward held back by send=False)
// is a late send [the op, the last op run when it was posted].
#include <doctest/doctest.h>

#include <algorithm>
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

// DualPipe.step() for every rank; nullopt where it asserts.
std::optional<std::vector<RankRun>> dualpipe_step(int p, int m) {
  if (p % 2 != 0) return std::nullopt;
  if (!(m > 0 && m % 2 == 0 && m >= 2 * p)) return std::nullopt;
  const int num_half_ranks = p / 2;
  const int half_num_chunks = m / 2;
  std::vector<RankRun> out;
  for (int rank = 0; rank < p; ++rank) {
    const int half_rank = std::min(rank, p - 1 - rank);
    const bool is_middle_rank = rank == p / 2 - 1 || rank == p / 2;
    // Module 1's microbatches are our m/2.. ; the second half of the ranks runs the phases swapped.
    const bool second_half = rank >= p / 2;
    StepOracleRank r({m / 2, second_half, m / 2, {rank > 0, rank < p - 1}, {rank < p - 1, rank > 0}});

    for (int i = 0; i < (num_half_ranks - half_rank - 1) * 2; ++i) r.forward_chunk(0);
    r.recv_forward(0);
    for (int i = 0; i < half_rank + 1; ++i) {
      r.forward_chunk(0, false, is_middle_rank);
      r.recv_forward(0);
      r.forward_chunk(1, true, !is_middle_rank || i < half_rank);
      if (!is_middle_rank) r.send_forward(0);
    }
    for (int i = 0; i < num_half_ranks - half_rank - 1; ++i) {
      r.backward_chunk(1, true);
      r.recv_forward(1);
      r.weight_chunk();
      r.forward_chunk(1, false);
    }
    for (int i = 0; i < half_num_chunks - p + half_rank + 1; ++i) {
      if (i == 0 && is_middle_rank) {
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
    for (int i = 0; i < num_half_ranks - half_rank - 1; ++i) {
      r.backward_chunk(1);
      r.forward_backward_chunk(1, 0);
    }
    const int step_6 = half_rank + 1;
    bool enable_zb = false;
    for (int i = 0; i < step_6; ++i) {
      if (i == step_6 / 2 && half_rank % 2 == 1) enable_zb = true;
      r.backward_chunk(1, enable_zb);
      if (i == step_6 / 2 && half_rank % 2 == 0) enable_zb = true;
      r.backward_chunk(0, enable_zb);
    }
    for (int i = 0; i < num_half_ranks - half_rank - 1; ++i) {
      r.weight_chunk();
      r.backward_chunk(0, true);
    }
    for (int i = 0; i < half_rank + 1; ++i) r.weight_chunk();
    REQUIRE(r.store_empty());
    out.push_back(r.take());
  }
  return out;
}

}  // namespace

TEST_CASE("make_dualpipe equals DeepSeek's DualPipe.step() per-rank order over the grid") {
  int compared = 0, rejected = 0;
  for (int p = 1; p <= 10; ++p)  // odd p must be rejected by both
    for (int m = 1; m <= 4 * p; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto expected = dualpipe_step(p, m);
      std::optional<hetsim::Timetable> actual;
      try {
        actual = hetsim::make_dualpipe(p, m);
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
      // The reference's topology: module 0 at position r of the direction entering at rank 0,
      // module 1 at position p-1-r of the one entering at rank p-1; stage = direction*p + position.
      for (int rank = 0; rank < p; ++rank)
        REQUIRE(t.stage_of[rank] == std::vector<int>{rank, p + (p - 1 - rank)});
      REQUIRE(t.paths.size() == 2);
      for (int q = 0; q < p; ++q) {
        CHECK(t.paths[0][q] == q);
        CHECK(t.paths[1][q] == p + q);
      }
      for (int mb = 0; mb < m; ++mb) CHECK(hetsim::path_index(t, mb) == (mb < m / 2 ? 0 : 1));
      for (int rank = 0; rank < p; ++rank) {
        CAPTURE(rank);
        REQUIRE(t.ops[rank] == (*expected)[rank].ops);
        REQUIRE(t.overlapped_pairs[rank] == (*expected)[rank].pairs);
        REQUIRE(t.early_receives[rank] == (*expected)[rank].early);
        REQUIRE(t.late_sends[rank] == (*expected)[rank].late);
      }
    }
  // Accepted: even p, even m in [2p, 4p] (3 + 5 + 7 + 9 + 11); the other 185 of 220 rejected.
  CHECK(compared == 35);
  CHECK(rejected == 185);
}

TEST_CASE("dualpipe oracle orders are runnable") {
  for (int p = 2; p <= 10; p += 2)
    for (int m = 2 * p; m <= 4 * p; m += 2) {
      CAPTURE(p);
      CAPTURE(m);
      const auto runs = dualpipe_step(p, m);
      REQUIRE(runs);
      hetsim::Timetable t = hetsim::make_dualpipe(p, m);  // placement and paths, checked above
      for (int rank = 0; rank < p; ++rank) {
        t.ops[rank] = (*runs)[rank].ops;
        t.overlapped_pairs[rank] = (*runs)[rank].pairs;
        t.early_receives[rank] = (*runs)[rank].early;
        t.late_sends[rank] = (*runs)[rank].late;
      }
      REQUIRE_NOTHROW(hetsim::validate(t));
    }
}

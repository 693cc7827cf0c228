// Megatron-LM's pipeline p2p without --overlap-p2p-comm (sim/pipeline_replay.hpp, P2pSync): a
// rank waits for each op's batch of sends and receives, a send completes only once its receiver
// has posted the matching receive, and the interleaved schedule sends a steady-state forward's
// output with the backward after it.
#include <doctest/doctest.h>

#include <cstdio>

#include <string>
#include <tuple>

#include "schedules/generators.hpp"
#include "sim/abstract_schedule.hpp"
#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

TEST_CASE("1F1B p=2, m=2: a blocking send pays its transfer on the critical path once more") {
  // F = 1, B = 2, transfer c = 0.25. Buffered sends: rank 0's F1 starts at once and only the
  // two hand-overs of one microbatch sit on the critical path: 3F + 2c + 3B. Megatron-LM's
  // rank 0 waits for act0 to arrive before F1, and act1 leaves only when rank 1 has posted its
  // receive after B0 (send_backward_recv_forward): 3F + 3c + 3B.
  const Timetable t = make_1f1b(2, 2);
  const double f = 1, b = 2, c = 0.25;
  const ScheduleReplay buffered = replay_schedule(t, AbstractCosts{f, b, 0, c});
  AbstractCosts blocking{f, b, 0, c};
  blocking.p2p = P2pSync::kSeparateWithinPhase;
  const ScheduleReplay megatron = replay_schedule(t, blocking);
  CHECK(buffered.makespan == doctest::Approx(3 * f + 2 * c + 3 * b).epsilon(1e-12));
  CHECK(megatron.makespan == doctest::Approx(3 * f + 3 * c + 3 * b).epsilon(1e-12));
}

TEST_CASE("1F1B with one microbatch: every receive is posted before its send, nothing changes") {
  // p = 3, m = 1: each rank waits for its input anyway, so waiting for its own sends costs
  // nothing: 3F + 3B + 4c either way.
  const Timetable t = make_1f1b(3, 1);
  AbstractCosts costs{1, 2, 0, 0.5};
  const double buffered = replay_schedule(t, costs).makespan;
  costs.p2p = P2pSync::kSeparateWithinPhase;
  CHECK(replay_schedule(t, costs).makespan == doctest::Approx(buffered).epsilon(1e-12));
  CHECK(buffered == doctest::Approx(3 + 6 + 4 * 0.5).epsilon(1e-12));
}

TEST_CASE(
    "Megatron's interleaved links: a steady-state F sends with its B and waits for the next B's "
    "input") {
  // p = 2, m = 4, v = 2: rank 0 warms up with 2(p-1) + (v-1)p = 4 forwards, rank 1 with 2, of
  // m*v = 8; each steady round is an F followed by a B.
  Timetable t = make_interleaved(2, 4, 2);
  add_megatron_interleaved_p2p_links(t);
  for (int rank = 0; rank < 2; ++rank) {
    const int warmup = rank == 0 ? 4 : 2;
    const int rounds = 8 - warmup;
    REQUIRE(t.late_sends[rank].size() == static_cast<std::size_t>(rounds));
    REQUIRE(t.early_receives[rank].size() == static_cast<std::size_t>(rounds));
    for (int k = 0; k < rounds; ++k) {
      const OpLink expected{warmup + 2 * k, warmup + 2 * k + 1};
      CHECK(t.late_sends[rank][k] == expected);
      CHECK(t.early_receives[rank][k] == expected);
      CHECK(t.ops[rank][expected.first].kind == OpKind::kForward);
      CHECK(t.ops[rank][expected.second].kind == OpKind::kBackward);
    }
  }
}

TEST_CASE("interleaved with Megatron's p2p finishes, and is never faster than buffered sends") {
  for (const int p : {2, 4, 8})
    for (const int v : {2, 3})
      for (const int m : {p, 2 * p, 3 * p})
        for (const double c : {0.0, 0.1, 0.6}) {
          INFO("p=" << p << " v=" << v << " m=" << m << " transfer=" << c);
          Timetable t = make_interleaved(p, m, v);
          const double buffered = replay_schedule(t, AbstractCosts{1, 2, 0, c}).makespan;
          add_megatron_interleaved_p2p_links(t);
          AbstractCosts costs{1, 2, 0, c};
          costs.p2p = P2pSync::kBatched;
          const double megatron = replay_schedule(t, costs).makespan;
          CHECK(megatron >= buffered - 1e-9);
        }
}

TEST_CASE("1F1B with Megatron's p2p finishes for any p and m, never faster than buffered sends") {
  for (const int p : {2, 3, 4, 8})
    for (const int m : {1, p - 1, p, 2 * p + 1})
      for (const double c : {0.0, 0.3}) {
        if (m < 1) continue;
        INFO("p=" << p << " m=" << m << " transfer=" << c);
        const Timetable t = make_1f1b(p, m);
        AbstractCosts costs{1, 2, 0, c};
        const double buffered = replay_schedule(t, costs).makespan;
        costs.p2p = P2pSync::kSeparateWithinPhase;
        CHECK(replay_schedule(t, costs).makespan >= buffered - 1e-9);
      }
}

namespace {

// Llama-3-8B on four DGX H100 nodes, tp 4 x pp 4, gbs 32, seq 4096, under `schedule` with `vpp`.
RunOptions four_node_plan(const char* schedule, int vpp) {
  RunOptions o;
  o.plan.tp = 4;
  o.plan.pp = 4;
  o.plan.vpp = vpp;
  o.plan.global_batch_size = 32;
  o.plan.seq_length = 4096;
  o.schedule = schedule;
  return o;
}

double four_node_iteration_s(const RunOptions& o) {
  return simulate_training(test::shipped_cluster("dgx-h100-4node"), test::shipped_catalog(),
                           test::shipped_model("llama-3-8b"), o)
      .iteration_time_s;
}

}  // namespace

TEST_CASE(
    "a run waits for its pipeline sends unless --overlap-p2p-comm, in Megatron's schedules only") {
  // Llama-3-8B on four DGX H100 nodes, tp 4 x pp 4: half the pipeline's hand-overs cross the
  // InfiniBand fabric, and what a sender waits for shows in the iteration. The interleaved
  // schedule waits only as Megatron-LM ran it before October 2023 (--no-overlap-p2p-communication);
  // by default it overlaps, as Megatron-LM does since (arguments.py, store_false).
  for (const auto& [schedule, vpp, waits] : {std::tuple<const char*, int, bool>{"1f1b", 1, true},
                                             {"interleaved", 2, false},
                                             {"gpipe", 1, false}}) {
    const std::string schedule_name = schedule;
    INFO(schedule_name);
    RunOptions o = four_node_plan(schedule, vpp);
    const double blocking = four_node_iteration_s(o);
    o.overlap_p2p_comm = true;
    const double overlapped = four_node_iteration_s(o);
    if (waits) {
      CHECK(blocking > overlapped);
    } else {
      CHECK(blocking == overlapped);
    }
  }
}

TEST_CASE("the interleaved schedule waits for its sends only with --no-overlap-p2p-communication") {
  // Before: interleaved always waited (Megatron-LM's behaviour until October 2023); its default
  // since overlaps, and the old behaviour is one flag away.
  RunOptions o = four_node_plan("interleaved", 2);
  const double current = four_node_iteration_s(o);
  o.no_overlap_p2p_comm = true;
  const double batched = four_node_iteration_s(o);
  o.no_overlap_p2p_comm = false;
  o.overlap_p2p_comm = true;
  const double explicit_overlap = four_node_iteration_s(o);
  std::printf("interleaved, Llama-3-8B tp 4 x pp 4 x vpp 2: default %.6f s, --no-overlap-p2p-communication %.6f s\n",
              current, batched);
  CHECK(batched > current);
  CHECK(explicit_overlap == current);
}

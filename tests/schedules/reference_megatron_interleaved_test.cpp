// Oracle for make_interleaved: Megatron-LM's interleaved 1F1B, re-expressed here from
//   NVIDIA/Megatron-LM, megatron/core/pipeline_parallel/schedules.py:
//   forward_backward_pipelining_with_interleaving (with its helpers get_pp_rank_microbatches and
//   get_schedule_table), and megatron/core/model_parallel_config.py for the default
//   microbatch_group_size_per_vp_stage (pipeline_model_parallel_size).
//
// What the reference does, per pipeline rank, with p ranks, v model chunks, m microbatches and
// group size g:
//   * it raises when g > m or g < p, and when 0 < m mod g < p (the last group would leave
//     dependency bubbles);
//   * the schedule table lists (microbatch, model chunk) per virtual microbatch k in [0, m*v):
//     groups of g microbatches starting at 0, g, 2g, ...; a group whose end reaches m takes all
//     microbatches up to m; each group goes through chunk 0, 1, ..., v-1 in turn;
//   * warm-up count: 2(p-1-rank) + (v-1)g, capped at m*v (then every microbatch is in warm-up);
//   * warm-up runs forward k for k < warm-up; the steady phase runs, for k in [0, m*v - warm-up),
//     forward k + warm-up then backward k; the cool-down runs the remaining backwards k in order;
//   * forward k runs table[k] and appends its input to the chunk's queue (input_tensors);
//     backward k runs on chunk v-1-table[k].chunk and pops the oldest queued input of that chunk,
//     so its microbatch is the oldest one forwarded but not yet backwarded there.
// The oracle below replays exactly that (the queues included; the microbatch of a backward is
// taken from the queue, not computed), with the default configuration: no
// overlap_moe_expert_parallel_comm (which would add one warm-up forward), not forward-only.
//
// Numbering: Megatron's microbatch_id is our microbatch, its model_chunk_id our chunk; chunk c of
// pipeline rank r is virtual stage c*p + r in both (looped placement). The backward is whole
// (split_backward = false).
#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/validator.hpp"

namespace {

using hetsim::OpKind;
using hetsim::ScheduledOp;

using RankOps = std::vector<std::vector<ScheduledOp>>;

// std::nullopt where the reference raises.
std::optional<RankOps> megatron_interleaved(int p, int m, int v, int g) {
  if (g > m || g < p) return std::nullopt;  // ValueError: group size outside [PP, M]
  const int final_group = m % g;
  if (final_group > 0 && final_group < p) return std::nullopt;  // RuntimeError: remainder

  // get_schedule_table.
  std::vector<int> table_microbatch, table_chunk;
  for (int low = 0; low < m; low += g) {
    const int high = low + g >= m ? m : low + g;
    for (int chunk = 0; chunk < v; ++chunk)
      for (int mb = low; mb < high; ++mb) {
        table_microbatch.push_back(mb);
        table_chunk.push_back(chunk);
      }
  }
  const int total = m * v;
  REQUIRE(static_cast<int>(table_chunk.size()) == total);

  RankOps out(p);
  for (int rank = 0; rank < p; ++rank) {
    // get_pp_rank_microbatches.
    int warmup = (p - rank - 1) * 2 + (v - 1) * g;
    if (warmup >= total) warmup = total;
    const int remaining = total - warmup;

    std::vector<std::deque<int>> input_queue(v);
    auto& ops = out[rank];
    const auto forward_step = [&](int k) {
      const int chunk = table_chunk[k % total];
      const int mb = table_microbatch[k];
      input_queue[chunk].push_back(mb);
      ops.push_back({OpKind::kForward, mb, chunk});
    };
    const auto backward_step = [&](int k) {
      const int chunk = v - table_chunk[k % total] - 1;
      REQUIRE_FALSE(input_queue[chunk].empty());
      const int mb = input_queue[chunk].front();
      input_queue[chunk].pop_front();
      ops.push_back({OpKind::kBackward, mb, chunk});
    };

    for (int k = 0; k < warmup; ++k) forward_step(k);           // warm-up
    for (int k = 0; k < remaining; ++k) {                       // steady 1F1B
      forward_step(k + warmup);
      backward_step(k);
    }
    for (int k = remaining; k < total; ++k) backward_step(k);  // cool-down
    for (const auto& queue : input_queue) REQUIRE(queue.empty());
  }
  return out;
}

// The generator's ops, or nullopt when it throws PlanError.
std::optional<RankOps> generated(int p, int m, int v, int g) {
  try {
    const hetsim::Timetable t = hetsim::make_interleaved(p, m, v, g);
    CHECK(t.ranks == p);
    CHECK(t.microbatches == m);
    CHECK(t.chunks_per_rank == v);
    CHECK_FALSE(t.split_backward);
    CHECK(t.stage_of == hetsim::looped_stage_map(p, v));
    return t.ops;
  } catch (const hetsim::PlanError&) {
    return std::nullopt;
  }
}

std::string describe(const std::optional<RankOps>& ops, int v) {
  if (!ops) return "(rejected)";
  hetsim::Timetable t;
  t.ranks = static_cast<int>(ops->size());
  t.chunks_per_rank = v;
  t.ops = *ops;
  std::string s;
  for (const std::string& line : hetsim::testing::orders_of(t)) s += line + "\n";
  return s;
}

}  // namespace

TEST_CASE("megatron oracle reproduces the reference's own table example (PP2, N3, M5, VP2)") {
  // The comment on get_schedule_table: microbatch ids 0 1 2 0 1 2 3 4 3 4, chunk ids
  // 0 0 0 1 1 1 0 0 1 1. Rank 1's warm-up is (v-1)g = 3 forwards.
  const auto ops = megatron_interleaved(2, 5, 2, 3);
  REQUIRE(ops);
  std::string forwards;
  for (const ScheduledOp& op : (*ops)[1])
    if (op.kind == OpKind::kForward)
      forwards += std::to_string(op.microbatch) + "." + std::to_string(op.chunk) + " ";
  CHECK(forwards == "0.0 1.0 2.0 0.1 1.1 2.1 3.0 4.0 3.1 4.1 ");
}

TEST_CASE("make_interleaved equals Megatron-LM's per-rank order over the grid") {
  int compared = 0, rejected = 0;
  for (int p = 2; p <= 6; ++p)
    for (int v = 2; v <= 4; ++v)
      for (int m = 1; m <= 24; ++m) {
        // Every g the reference could be given around the accepted range [p, m], plus 0 (the
        // generator's "default") which must behave as g = p, Megatron's default.
        std::vector<int> groups;
        for (int g = std::max(1, p - 1); g <= m + 1; ++g) groups.push_back(g);
        if (groups.empty() || groups.back() < p) groups.push_back(p);
        for (int g : groups) {
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(g);
          const auto expected = megatron_interleaved(p, m, v, g);
          const auto actual = generated(p, m, v, g);
          REQUIRE_MESSAGE(expected.has_value() == actual.has_value(),
                          "reference: " << describe(expected, v)
                                        << "generator: " << describe(actual, v));
          if (!expected) {
            ++rejected;
            continue;
          }
          for (int rank = 0; rank < p; ++rank) {
            CAPTURE(rank);
            REQUIRE((*actual)[rank] == (*expected)[rank]);
          }
          ++compared;
          if (g == p) CHECK(generated(p, m, v, 0) == actual);  // default group size
        }
        if (m < p) CHECK_FALSE(generated(p, m, v, 0).has_value());
      }
  // Accepted: p <= g <= m and m mod g not in (0, p); counted separately from that rule.
  CHECK(compared == 2094);
  CHECK(rejected == 2088);
}

TEST_CASE("megatron oracle orders are runnable") {
  for (int p = 2; p <= 6; ++p)
    for (int v = 2; v <= 4; ++v)
      for (int m = p; m <= 24; m += 3)
        for (int g = p; g <= m; ++g) {
          const auto ops = megatron_interleaved(p, m, v, g);
          if (!ops) continue;
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(g);
          hetsim::Timetable t;
          t.kind = "megatron-oracle";
          t.ranks = p;
          t.microbatches = m;
          t.chunks_per_rank = v;
          t.stage_of = hetsim::looped_stage_map(p, v);
          t.ops = *ops;
          REQUIRE_NOTHROW(hetsim::validate(t));
        }
}

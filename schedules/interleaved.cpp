// Interleaved 1F1B (Narayanan et al., SC'21, Sec. 2.2) in the per-rank order of Megatron-LM's
// forward_backward_pipelining_with_interleaving (megatron/core/pipeline_parallel/schedules.py).
//
// Microbatches go in groups of g (microbatch_group_size_per_vp_stage, default p); each group runs
// through chunk 0, then chunk 1, ..., giving the forward table of (microbatch, chunk) pairs
// indexed by virtual microbatch k in [0, m*v). Backward k uses the same microbatch with chunk
// v-1-chunk. Rank r runs w = min(2(p-r-1) + (v-1)g, m*v) warm-up forwards, then m*v - w rounds of
// (forward k+w, backward k), then the remaining backwards.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "base/error.hpp"
#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

namespace {

// Megatron's get_schedule_table: (microbatch, chunk) per virtual microbatch.
std::vector<std::pair<int, int>> forward_table(int microbatches, int chunks, int group) {
  std::vector<std::pair<int, int>> table;
  table.reserve(static_cast<std::size_t>(microbatches) * chunks);
  for (int first = 0; first < microbatches; first += group) {
    const int last = std::min(first + group, microbatches);  // the final group takes the rest
    for (int chunk = 0; chunk < chunks; ++chunk)
      for (int mb = first; mb < last; ++mb) table.emplace_back(mb, chunk);
  }
  return table;
}

// Forwards rank `rank` runs before its first backward, as Megatron-LM's
// get_num_warmup_microbatches counts them.
int warmup_forwards(int ranks, int rank, int chunks_per_rank, int group, int total) {
  return std::min(2 * (ranks - rank - 1) + (chunks_per_rank - 1) * group, total);
}

}  // namespace

Timetable make_interleaved(int ranks, int microbatches, int chunks_per_rank, int group_size) {
  const std::string kind = "interleaved";
  require_at_least(kind, "pipeline ranks p", ranks, 1);
  require_at_least(kind, "microbatches m", microbatches, 1);
  if (chunks_per_rank < 2)
    throw PlanError(fmt::format(
        "interleaved: chunks per rank v must be >= 2 (got {}); with one chunk use 1f1b",
        chunks_per_rank));
  const int group = group_size > 0 ? group_size : ranks;
  if (group < ranks || group > microbatches)
    throw PlanError(fmt::format(
        "interleaved: microbatch group size g must lie in [p, m] = [{}, {}] (got {}); Megatron-LM "
        "needs m >= p for the interleaved schedule",
        ranks, microbatches, group));
  const int final_group = microbatches % group;
  if (final_group > 0 && final_group < ranks)
    throw PlanError(fmt::format(
        "interleaved: m mod g must be 0 or >= p (m = {}, g = {}, p = {}, m mod g = {}); otherwise "
        "the last group leaves dependency bubbles; choose m a multiple of {} or g dividing m",
        microbatches, group, ranks, final_group, group));

  Timetable t = empty_timetable(kind, ranks, microbatches, chunks_per_rank, false);
  const auto table = forward_table(microbatches, chunks_per_rank, group);
  const int total = static_cast<int>(table.size());
  const auto forward_op = [&](int k) { return forward(table[k].first, table[k].second); };
  const auto backward_op = [&](int k) {
    return backward(table[k].first, chunks_per_rank - 1 - table[k].second);
  };
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = t.ops[rank];
    list.reserve(2 * static_cast<std::size_t>(total));
    const int warmup = warmup_forwards(ranks, rank, chunks_per_rank, group, total);
    for (int k = 0; k < warmup; ++k) list.push_back(forward_op(k));
    for (int k = 0; k + warmup < total; ++k) {
      list.push_back(forward_op(k + warmup));
      list.push_back(backward_op(k));
    }
    for (int k = total - warmup; k < total; ++k) list.push_back(backward_op(k));
  }
  return t;
}

void add_megatron_interleaved_p2p_links(Timetable& t, int group_size) {
  const int group = group_size > 0 ? group_size : t.ranks;
  const int total = t.microbatches * t.chunks_per_rank;
  t.late_sends.assign(static_cast<std::size_t>(t.ranks), {});
  t.early_receives.assign(static_cast<std::size_t>(t.ranks), {});
  for (int rank = 0; rank < t.ranks; ++rank) {
    // Steady-state rounds only: where every forward is a warm-up one, Megatron-LM receives the
    // first gradient by itself after the last forward (all_warmup_microbatches).
    const int warmup = warmup_forwards(t.ranks, rank, t.chunks_per_rank, group, total);
    for (int k = 0; warmup + k < total; ++k) {
      const OpLink round{warmup + 2 * k, warmup + 2 * k + 1};
      t.late_sends[rank].push_back(round);
      t.early_receives[rank].push_back(round);
    }
  }
}

}  // namespace hetsim

// The validator runs in three passes, each O(total ops):
//  1. shape: ranks, chunks, stage_of a bijection, op fields in range, no op twice, none missing;
//  2. same-rank order: no op listed before a dependency that lives on its own rank;
//  3. a dependency walk (schedules/dependency_walk.hpp): ranks run their lists in order, a rank
//     blocked on an op that is not done yet parks on that op and is woken when it completes; if
//     ranks remain parked when nothing can run, the parked ranks form a wait-for cycle, which is
//     reported.
#include "schedules/validator.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "schedules/dependency_walk.hpp"

namespace hetsim {

namespace {

constexpr int kNone = -1;
constexpr std::size_t kMaxNamed = 8;  // ops listed in one message before "and N more"

std::string join_named(const std::vector<std::string>& names, std::size_t total) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  if (total > names.size()) out += fmt::format(" and {} more", total - names.size());
  return out;
}

// Timetable::early_receives and late_sends: one row per rank of [i, j], i < j < the rank's op
// count, i ascending.
void check_links(const Timetable& t, const char* key, const std::vector<std::vector<OpLink>>& links) {
  if (links.empty()) return;
  if (links.size() != static_cast<std::size_t>(t.ranks))
    throw ScheduleError(fmt::format("timetable '{}': {} has {} rows for {} ranks", t.kind, key,
                                    links.size(), t.ranks));
  for (int rank = 0; rank < t.ranks; ++rank) {
    const auto size = static_cast<long long>(t.ops[rank].size());
    int previous = -1;
    for (const OpLink& e : links[rank]) {
      if (e.first <= previous || e.second <= e.first || e.second >= size)
        throw ScheduleError(fmt::format(
            "timetable '{}': {}[{}] has [{}, {}]; an entry is [i, j] with i < j < {} (the rank's "
            "ops), i ascending, one per i",
            t.kind, key, rank, e.first, e.second, size));
      previous = e.first;
    }
  }
}

void check_shape(const Timetable& t) {
  const auto fail = [&](const std::string& what) {
    throw ScheduleError(fmt::format("timetable '{}': {}", t.kind, what));
  };
  if (t.ranks < 1) fail(fmt::format("ranks must be >= 1 (got {})", t.ranks));
  if (t.microbatches < 1) fail(fmt::format("microbatches must be >= 1 (got {})", t.microbatches));
  if (t.chunks_per_rank < 1)
    fail(fmt::format("chunks_per_rank must be >= 1 (got {})", t.chunks_per_rank));
  if (t.ops.size() != static_cast<std::size_t>(t.ranks))
    fail(fmt::format("has {} op lists for {} ranks", t.ops.size(), t.ranks));
  if (t.stage_of.size() != static_cast<std::size_t>(t.ranks))
    fail(fmt::format("stage_of has {} rows for {} ranks", t.stage_of.size(), t.ranks));
  for (int rank = 0; rank < t.ranks; ++rank) {
    if (t.stage_of[rank].size() != static_cast<std::size_t>(t.chunks_per_rank))
      fail(fmt::format("stage_of[{}] has {} entries for {} chunks per rank", rank,
                       t.stage_of[rank].size(), t.chunks_per_rank));
  }
  if (t.sequence_splits < 1)
    fail(fmt::format("sequence_splits must be >= 1 (got {})", t.sequence_splits));
  if (t.microbatches % t.sequence_splits != 0)
    fail(fmt::format("microbatches ({}) count sequence segments, so must be a multiple of "
                     "sequence_splits ({})",
                     t.microbatches, t.sequence_splits));
  for (std::size_t i = 0; i < t.paths.size(); ++i) {
    const auto& path = t.paths[i];
    if (path.empty()) fail(fmt::format("paths[{}] is empty", i));
    std::vector<bool> on_path(static_cast<std::size_t>(t.stages()), false);
    for (const int s : path) {
      if (s < 0 || s >= t.stages())
        fail(fmt::format("paths[{}] has stage {}; stages are 0..{}", i, s, t.stages() - 1));
      if (on_path[s]) fail(fmt::format("paths[{}] visits stage {} twice", i, s));
      on_path[s] = true;
    }
  }
  if (!t.path_of_microbatch.empty()) {
    if (t.path_of_microbatch.size() != static_cast<std::size_t>(t.microbatches))
      fail(fmt::format("path_of_microbatch has {} entries for {} microbatches",
                       t.path_of_microbatch.size(), t.microbatches));
    const int path_count = t.paths.empty() ? 1 : static_cast<int>(t.paths.size());
    for (int mb = 0; mb < t.microbatches; ++mb) {
      const int path = t.path_of_microbatch[mb];
      if (path < 0 || path >= path_count)
        fail(fmt::format("path_of_microbatch[{}] = {}; paths are 0..{}", mb, path, path_count - 1));
      // Segments of one microbatch are one sequence: they travel together.
      if (t.sequence_splits > 1 && mb % t.sequence_splits != 0 &&
          path != t.path_of_microbatch[mb - 1])
        fail(fmt::format("path_of_microbatch[{}] = {} differs from segment {} of the same "
                         "microbatch (path {})",
                         mb, path, mb - 1, t.path_of_microbatch[mb - 1]));
    }
  }
  if (!t.overlapped_pairs.empty()) {
    if (t.overlapped_pairs.size() != static_cast<std::size_t>(t.ranks))
      fail(fmt::format("overlapped_pairs has {} rows for {} ranks", t.overlapped_pairs.size(),
                       t.ranks));
    for (int rank = 0; rank < t.ranks; ++rank) {
      const auto& list = t.ops[rank];
      int previous = -2;
      for (const int i : t.overlapped_pairs[rank]) {
        if (i < 0 || static_cast<std::size_t>(i) + 1 >= list.size() || i < previous + 2)
          fail(fmt::format("overlapped_pairs[{}] has position {}; pairs need ascending positions "
                           "i with ops i and i+1 on the rank, not sharing an op",
                           rank, i));
        if (list[i].kind != OpKind::kForward || list[i + 1].kind != OpKind::kBackward)
          fail(fmt::format("overlapped_pairs[{}] position {} pairs {}{} with {}{}; a pair is an F "
                           "followed by a B",
                           rank, i, to_char(list[i].kind), list[i].microbatch,
                           to_char(list[i + 1].kind), list[i + 1].microbatch));
        // Such a B needs this very F's output: the two cannot run as one unit.
        if (list[i].microbatch == list[i + 1].microbatch && list[i].chunk == list[i + 1].chunk)
          fail(fmt::format("overlapped_pairs[{}] position {} pairs F{} with B{} of the same "
                           "chunk, its own backward; a pair's B must not need the F it runs with",
                           rank, i, list[i].microbatch, list[i + 1].microbatch));
        previous = i;
      }
    }
  }
  check_links(t, "early_receives", t.early_receives);
  check_links(t, "late_sends", t.late_sends);
  if (!t.weight_versions.empty()) {
    if (t.weight_versions.size() != static_cast<std::size_t>(t.ranks))
      fail(fmt::format("weight_versions has {} entries for {} ranks", t.weight_versions.size(),
                       t.ranks));
    for (int rank = 0; rank < t.ranks; ++rank)
      if (t.weight_versions[rank] < 1)
        fail(fmt::format("weight_versions[{}] must be >= 1 (got {})", rank,
                         t.weight_versions[rank]));
  }
}

struct Position {
  int rank = kNone;
  int index = kNone;
};

// Pass 1: every op in range, none twice, none missing. Returns where each op sits.
std::vector<Position> place_ops(const Timetable& t, const OpIndex& index) {
  std::vector<Position> where(index.size());
  for (int rank = 0; rank < t.ranks; ++rank) {
    const auto& list = t.ops[rank];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const ScheduledOp& op = list[i];
      const auto at = fmt::format("rank {} position {}", rank, i);
      if (op.chunk < 0 || op.chunk >= t.chunks_per_rank)
        throw ScheduleError(fmt::format("timetable '{}': {} has {} of chunk {}; chunks are 0..{}",
                                        t.kind, at, to_char(op.kind), op.chunk,
                                        t.chunks_per_rank - 1));
      if (op.microbatch < 0 || op.microbatch >= t.microbatches)
        throw ScheduleError(fmt::format(
            "timetable '{}': {} has {} of microbatch {}; microbatches are 0..{}", t.kind, at,
            to_char(op.kind), op.microbatch, t.microbatches - 1));
      const RankOp here{rank, op};
      if (op.kind == OpKind::kWeight && !t.split_backward)
        throw ScheduleError(fmt::format(
            "timetable '{}': {} at position {} is a weight-gradient op, but split_backward is false",
            t.kind, describe(t, here), i));
      if (path_position(t, op.microbatch, t.stage(rank, op.chunk)) < 0)
        throw ScheduleError(fmt::format(
            "timetable '{}': {} at position {} is off its microbatch's path {}", t.kind,
            describe(t, here), i, path_index(t, op.microbatch)));
      Position& slot = where[index.of(op.kind, op.microbatch, t.stage(rank, op.chunk))];
      if (slot.rank != kNone)
        throw ScheduleError(fmt::format("timetable '{}': {} appears twice, at positions {} and {}",
                                        t.kind, describe(t, here), slot.index, i));
      slot = {rank, static_cast<int>(i)};
    }
  }
  const std::vector<RankOp> located = stage_locations(t);
  std::vector<std::string> missing;
  std::size_t missing_count = 0;
  const int kinds = t.split_backward ? 3 : 2;
  // Stage-major order (then kind, then microbatch) so messages list ops the way a reader scans a
  // pipeline; a microbatch is expected only on the stages of its path.
  std::vector<std::vector<int>> on_stage(static_cast<std::size_t>(t.stages()));
  for (int mb = 0; mb < t.microbatches; ++mb)
    for (const int stage : path_stages(t, mb)) on_stage[stage].push_back(mb);
  for (int stage = 0; stage < t.stages(); ++stage) {
    for (int k = 0; k < kinds; ++k) {
      const auto kind = static_cast<OpKind>(k);
      for (const int mb : on_stage[stage]) {
        if (where[index.of(kind, mb, stage)].rank != kNone) continue;
        if (missing.size() < kMaxNamed) {
          RankOp op = located[stage];
          op.op.kind = kind;
          op.op.microbatch = mb;
          missing.push_back(describe(t, op));
        }
        ++missing_count;
      }
    }
  }
  if (missing_count > 0)
    throw ScheduleError(fmt::format("timetable '{}' is missing {} op{}: {}", t.kind, missing_count,
                                    missing_count == 1 ? "" : "s",
                                    join_named(missing, missing_count)));
  return where;
}

// Pass 2: an op listed before a dependency on its own rank can never run.
void check_same_rank_order(const Timetable& t, const std::vector<RankOp>& located,
                           const OpIndex& index, const std::vector<Position>& where) {
  for (int rank = 0; rank < t.ranks; ++rank) {
    const auto& list = t.ops[rank];
    for (std::size_t i = 0; i < list.size(); ++i) {
      for (const RankOp& dep : dependencies(t, located, rank, list[i])) {
        if (dep.rank != rank) continue;
        const Position& p = where[index.of(t, dep)];
        if (p.index > static_cast<int>(i))
          throw ScheduleError(fmt::format(
              "timetable '{}': {} at position {} is scheduled before {} at position {}, which it "
              "depends on",
              t.kind, describe(t, {rank, list[i]}), i, describe(t, dep), p.index));
      }
    }
  }
}

// Pass 3: the walk (schedules/dependency_walk.hpp); ranks left with ops are stuck.
void walk(const Timetable& t, const std::vector<RankOp>& located) {
  const WalkResult walked =
      walk_dependencies(t, located, [](int, std::size_t, std::size_t, const UnitDependencies&) {});
  const std::vector<std::size_t>& next = walked.next;
  const std::vector<RankOp>& waits_for = walked.waits_for;
  // Every unfinished rank is parked on an op of another unfinished rank (same-rank order was
  // checked), so following waits_for from the lowest unfinished rank must close a cycle.
  int start = kNone;
  for (int rank = 0; rank < t.ranks && start == kNone; ++rank)
    if (next[rank] < t.ops[rank].size()) start = rank;
  if (start == kNone) return;
  std::vector<int> visit_order(static_cast<std::size_t>(t.ranks), kNone);
  std::vector<int> path;
  int rank = start;
  while (visit_order[rank] == kNone) {
    visit_order[rank] = static_cast<int>(path.size());
    path.push_back(rank);
    rank = waits_for[rank].rank;
  }
  std::vector<int> cycle(path.begin() + visit_order[rank], path.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string text;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const int r = cycle[i];
    const RankOp head{r, t.ops[r][next[r]]};
    const RankOp& dep = waits_for[r];
    const RankOp blocker{dep.rank, t.ops[dep.rank][next[dep.rank]]};
    text += fmt::format("{}{} waits for {}, which is queued behind {}", i ? "; " : "",
                        describe(t, head), describe(t, dep), describe(t, blocker));
  }
  throw ScheduleError(fmt::format("timetable '{}' deadlocks: {}", t.kind, text));
}

}  // namespace

void validate(const Timetable& t) {
  check_shape(t);
  const std::vector<RankOp> located = stage_locations(t);
  const OpIndex index(t.microbatches, t.stages());
  const std::vector<Position> where = place_ops(t, index);
  check_same_rank_order(t, located, index, where);
  walk(t, located);
}

void validate(const Timetable& t, const std::string& file) {
  if (file.empty()) return validate(t);
  try {
    validate(t);
  } catch (const ScheduleError& e) {
    throw ScheduleError(file + ": " + e.what());
  }
}

}  // namespace hetsim

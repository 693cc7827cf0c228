#include "schedules/timetable.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace hetsim {

char to_char(OpKind k) {
  switch (k) {
    case OpKind::kForward: return 'F';
    case OpKind::kBackward: return 'B';
    case OpKind::kWeight: return 'W';
  }
  return '?';
}

std::vector<std::vector<char>> pair_starts(const Timetable& t) {
  std::vector<std::vector<char>> starts(t.ops.size());
  for (std::size_t rank = 0; rank < t.ops.size(); ++rank) {
    starts[rank].assign(t.ops[rank].size(), 0);
    if (rank < t.overlapped_pairs.size())
      for (const int i : t.overlapped_pairs[rank])
        if (i >= 0 && static_cast<std::size_t>(i) < starts[rank].size()) starts[rank][i] = 1;
  }
  return starts;
}

namespace {

// [rank][position] -> the `second` of the link whose `first` is that position, else -1.
std::vector<std::vector<int>> link_targets(const Timetable& t,
                                           const std::vector<std::vector<OpLink>>& links) {
  std::vector<std::vector<int>> targets(t.ops.size());
  for (std::size_t rank = 0; rank < t.ops.size(); ++rank) {
    targets[rank].assign(t.ops[rank].size(), -1);
    if (rank < links.size())
      for (const OpLink& e : links[rank])
        if (e.first >= 0 && static_cast<std::size_t>(e.first) < targets[rank].size())
          targets[rank][e.first] = e.second;
  }
  return targets;
}

}  // namespace

std::vector<std::vector<int>> early_receive_targets(const Timetable& t) {
  return link_targets(t, t.early_receives);
}

std::vector<std::vector<int>> late_send_targets(const Timetable& t) {
  return link_targets(t, t.late_sends);
}

std::vector<std::vector<int>> looped_stage_map(int ranks, int chunks_per_rank) {
  std::vector<std::vector<int>> map(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    for (int chunk = 0; chunk < chunks_per_rank; ++chunk) map[rank].push_back(chunk * ranks + rank);
  }
  return map;
}

RankOp Timetable::locate_stage(int stage) const {
  for (int rank = 0; rank < ranks; ++rank) {
    for (int chunk = 0; chunk < chunks_per_rank; ++chunk) {
      if (stage_of[rank][chunk] == stage) {
        RankOp found;
        found.rank = rank;
        found.op.chunk = chunk;
        return found;
      }
    }
  }
  throw ScheduleError(fmt::format("timetable '{}' has no virtual stage {} (stages 0..{})", kind,
                                  stage, stages() - 1));
}

std::vector<RankOp> stage_locations(const Timetable& t) {
  std::vector<RankOp> located(static_cast<std::size_t>(t.stages()));
  std::vector<bool> seen(located.size(), false);
  for (int rank = 0; rank < t.ranks; ++rank) {
    for (int chunk = 0; chunk < t.chunks_per_rank; ++chunk) {
      const int s = t.stage_of[rank][chunk];
      if (s < 0 || s >= t.stages() || seen[s]) {
        throw ScheduleError(fmt::format(
            "timetable '{}': stage_of[{}][{}] = {} is not a free stage in 0..{}; stage_of must map "
            "each (rank, chunk) to a different stage",
            t.kind, rank, chunk, s, t.stages() - 1));
      }
      seen[s] = true;
      located[s].rank = rank;
      located[s].op.chunk = chunk;
    }
  }
  return located;
}

int path_index(const Timetable& t, int microbatch) {
  return t.path_of_microbatch.empty() ? 0 : t.path_of_microbatch[microbatch];
}

int path_position(const Timetable& t, int microbatch, int stage) {
  if (t.paths.empty()) return (stage >= 0 && stage < t.stages()) ? stage : -1;
  const std::vector<int>& path = t.paths[path_index(t, microbatch)];
  for (std::size_t i = 0; i < path.size(); ++i)
    if (path[i] == stage) return static_cast<int>(i);
  return -1;
}

int previous_stage(const Timetable& t, int microbatch, int stage) {
  const int at = path_position(t, microbatch, stage);
  if (at <= 0) return -1;
  return t.paths.empty() ? stage - 1 : t.paths[path_index(t, microbatch)][at - 1];
}

int next_stage(const Timetable& t, int microbatch, int stage) {
  const int at = path_position(t, microbatch, stage);
  if (at < 0) return -1;
  if (t.paths.empty()) return stage + 1 < t.stages() ? stage + 1 : -1;
  const std::vector<int>& path = t.paths[path_index(t, microbatch)];
  return at + 1 < static_cast<int>(path.size()) ? path[at + 1] : -1;
}

std::vector<int> path_stages(const Timetable& t, int microbatch) {
  if (!t.paths.empty()) return t.paths[path_index(t, microbatch)];
  std::vector<int> all(static_cast<std::size_t>(t.stages()));
  for (int s = 0; s < t.stages(); ++s) all[s] = s;
  return all;
}

namespace {

RankOp op_at(const RankOp& where, OpKind kind, int microbatch) {
  RankOp out = where;
  out.op.kind = kind;
  out.op.microbatch = microbatch;
  return out;
}

}  // namespace

DependencyList dependencies(const Timetable& t, const std::vector<RankOp>& locations, int rank,
                            const ScheduledOp& op) {
  DependencyList deps;
  const int s = t.stage(rank, op.chunk);
  const auto add_for = [&](int microbatch, int stage, OpKind kind) {
    deps.ops[deps.count++] = op_at(locations[stage], kind, microbatch);
  };
  const auto add = [&](int stage, OpKind kind) { add_for(op.microbatch, stage, kind); };
  const int splits = t.sequence_splits;
  const int segment = splits > 1 ? op.microbatch % splits : 0;
  switch (op.kind) {
    case OpKind::kForward: {
      const int previous = previous_stage(t, op.microbatch, s);
      if (previous >= 0) add(previous, OpKind::kForward);
      if (segment > 0) add_for(op.microbatch - 1, s, OpKind::kForward);
      break;
    }
    case OpKind::kBackward: {
      // The loss is computed at the end of the last stage's forward, so its backward needs only
      // that forward; every other backward also needs the gradient from the next stage.
      const int next = next_stage(t, op.microbatch, s);
      if (next >= 0) add(next, OpKind::kBackward);
      // A later segment's backward on this stage follows its own forward, which follows this
      // segment's forward, so it stands in for F here and the list stays at two.
      if (segment + 1 < splits) {
        add_for(op.microbatch + 1, s, OpKind::kBackward);
      } else {
        add(s, OpKind::kForward);
      }
      break;
    }
    case OpKind::kWeight:
      add(s, OpKind::kBackward);
      break;
  }
  return deps;
}

std::vector<RankOp> dependencies(const Timetable& t, int rank, const ScheduledOp& op) {
  const DependencyList deps = dependencies(t, stage_locations(t), rank, op);
  return {deps.begin(), deps.end()};
}

std::string describe(const Timetable& t, const RankOp& op) {
  if (t.sequence_splits > 1)
    return fmt::format("{}(mb {} segment {}, stage {}) on rank {}", to_char(op.op.kind),
                       op.op.microbatch / t.sequence_splits, op.op.microbatch % t.sequence_splits,
                       t.stage(op.rank, op.op.chunk), op.rank);
  return fmt::format("{}(mb {}, stage {}) on rank {}", to_char(op.op.kind), op.op.microbatch,
                     t.stage(op.rank, op.op.chunk), op.rank);
}

}  // namespace hetsim

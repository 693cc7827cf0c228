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
  const auto add = [&](int stage, OpKind kind) {
    deps.ops[deps.count++] = op_at(locations[stage], kind, op.microbatch);
  };
  switch (op.kind) {
    case OpKind::kForward:
      if (s > 0) add(s - 1, OpKind::kForward);
      break;
    case OpKind::kBackward:
      // The loss is computed at the end of the last stage's forward, so its backward needs only
      // that forward; every other backward also needs the gradient from the next stage.
      if (s + 1 < t.stages()) add(s + 1, OpKind::kBackward);
      add(s, OpKind::kForward);
      break;
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
  return fmt::format("{}(mb {}, stage {}) on rank {}", to_char(op.op.kind), op.op.microbatch,
                     t.stage(op.rank, op.op.chunk), op.rank);
}

}  // namespace hetsim

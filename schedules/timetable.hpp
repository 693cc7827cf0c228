#pragma once
// The timetable: for every pipeline rank, the ordered compute ops it runs, and the map from
// virtual stage to (rank, chunk). Generators in this folder make them; the validator proves
// they can run; sim/ replays them.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hetsim {

// F: forward. B: backward (the whole backward when the timetable does not split it, else only
// the input gradient). W: weight gradient, only in split timetables.
enum class OpKind : std::uint8_t { kForward, kBackward, kWeight };
char to_char(OpKind k);  // 'F', 'B', 'W'

struct ScheduledOp {
  OpKind kind = OpKind::kForward;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this rank, 0-based
  friend bool operator==(const ScheduledOp&, const ScheduledOp&) = default;
};

// An op placed on a rank; what dependency and error messages talk about.
struct RankOp {
  int rank = 0;
  ScheduledOp op;
  friend bool operator==(const RankOp&, const RankOp&) = default;
};

struct Timetable {
  std::string kind;                 // generator name, e.g. "1f1b"
  int ranks = 0;                    // p
  int microbatches = 0;             // m
  int chunks_per_rank = 1;          // v
  bool split_backward = false;      // B and W are separate ops
  std::vector<std::vector<ScheduledOp>> ops;     // [rank] -> ordered ops
  std::vector<std::vector<int>> stage_of;        // [rank][chunk] -> virtual stage

  int stages() const { return ranks * chunks_per_rank; }
  // Inverse of stage_of (computed on demand; O(stages)).
  RankOp locate_stage(int stage) const;  // op is unset except chunk
  int stage(int rank, int chunk) const { return stage_of[rank][chunk]; }
};

// Megatron-LM's placement: virtual stage of (rank, chunk) is chunk * ranks + rank.
std::vector<std::vector<int>> looped_stage_map(int ranks, int chunks_per_rank);

// The ops that must finish before `op` on `rank` may start: the previous stage's F for F, the
// next stage's B and this stage's F for B, this stage's B for W. Same-rank dependencies are
// included; the caller decides which cross ranks (and so become transfers).
std::vector<RankOp> dependencies(const Timetable& t, int rank, const ScheduledOp& op);

// Every stage's (rank, chunk), indexed by stage: the inverse of stage_of in one O(stages) pass,
// for callers that look stages up per op (the validator, the replay).
std::vector<RankOp> stage_locations(const Timetable& t);

// At most two dependencies per op, held inline so hot paths do not allocate.
struct DependencyList {
  std::array<RankOp, 2> ops{};
  int count = 0;
  const RankOp* begin() const { return ops.data(); }
  const RankOp* end() const { return ops.data() + count; }
};
// Same rule as dependencies(), with stages located through `locations` (from stage_locations).
DependencyList dependencies(const Timetable& t, const std::vector<RankOp>& locations, int rank,
                            const ScheduledOp& op);

// Human name of an op for messages: "F(mb 3, stage 5) on rank 1".
std::string describe(const Timetable& t, const RankOp& op);

}  // namespace hetsim

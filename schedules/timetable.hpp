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

// Two positions in a rank's op list, first < second; what they mean depends on the list holding
// them (Timetable::early_receives, Timetable::late_sends).
struct OpLink {
  int first = 0;
  int second = 0;
  friend bool operator==(const OpLink&, const OpLink&) = default;
};

struct Timetable {
  std::string kind;                 // generator name, e.g. "1f1b"
  int ranks = 0;                    // p
  int microbatches = 0;             // m
  int chunks_per_rank = 1;          // v
  bool split_backward = false;      // B and W are separate ops
  std::vector<std::vector<ScheduledOp>> ops;     // [rank] -> ordered ops
  std::vector<std::vector<int>> stage_of;        // [rank][chunk] -> virtual stage

  // Paths, for bidirectional placements (DualPipe) where a microbatch visits only some virtual
  // stages: each path is the sequence of stages a microbatch runs its forward through, and its
  // position along the path is the slice of the model's layers that stage holds for it. Empty:
  // one path 0..stages-1.
  std::vector<std::vector<int>> paths;
  std::vector<int> path_of_microbatch;  // [microbatch] -> index into paths; empty: all on path 0

  // Seq1F1B: each microbatch is cut along the sequence into k segments, and `microbatches`
  // counts segments (segment j of microbatch i has index i*k + j). On a stage, F of segment j
  // follows F of segment j-1 (causal attention reads the earlier segments' keys and values) and
  // B goes the other way (later segments send gradients back to earlier ones' keys and values).
  int sequence_splits = 1;

  // DualPipe's overlapped forward-backward: [rank] -> ascending positions i at which op i (an F)
  // and op i+1 (a B of the other chunk) run as one unit, their compute and communication
  // overlapped: the unit starts when both ops' inputs have arrived and both finish together.
  // Empty: no overlapped units.
  std::vector<std::vector<int>> overlapped_pairs;

  // Receives posted ahead of their op: [rank] -> ascending by `first`, at most one per first.
  // DeepSeek's DualPipe step() sometimes posts the receive of a later op (a forward's input)
  // before running an earlier one, and the `_commit_and_wait_comm` in front of that one waits
  // for it: op `first` cannot start before the inputs that op `second` gets from other ranks
  // have arrived. Empty: every receive is waited for by its own op.
  std::vector<std::vector<OpLink>> early_receives;
  // Sends posted after a later op: [rank] -> ascending by `first`, at most one per first. step()
  // sometimes sends an op's output only after another op ran (a forward's after the next
  // forward, a whole backward's after its weight gradients, computed in the same call): op
  // `first`'s output reaches other ranks when op `second` is done. Empty: each op sends its
  // output when it is done.
  std::vector<std::vector<OpLink>> late_sends;

  // PipeDream weight stashing: parameter versions rank r keeps ([rank]; empty: 1 each).
  std::vector<int> weight_versions;

  int stages() const { return ranks * chunks_per_rank; }
  // Inverse of stage_of (computed on demand; O(stages)).
  RankOp locate_stage(int stage) const;  // op is unset except chunk
  int stage(int rank, int chunk) const { return stage_of[rank][chunk]; }
};

// The path `microbatch` follows (paths[path_of_microbatch[mb]], or 0..stages-1 when paths is
// empty); previous_stage/next_stage give the neighbours along it, -1 at its ends (and for a stage
// not on it). path_position is the 0-based position of `stage` on that path, -1 when absent.
int previous_stage(const Timetable& t, int microbatch, int stage);
int next_stage(const Timetable& t, int microbatch, int stage);
int path_position(const Timetable& t, int microbatch, int stage);
int path_index(const Timetable& t, int microbatch);  // 0 when path_of_microbatch is empty
// The stages of `microbatch`'s path, in forward order.
std::vector<int> path_stages(const Timetable& t, int microbatch);

// [rank][position] -> 1 where an overlapped pair starts (from overlapped_pairs), else 0.
std::vector<std::vector<char>> pair_starts(const Timetable& t);

// [rank][position] -> the position whose inputs the op there also waits for (from
// early_receives), else -1.
std::vector<std::vector<int>> early_receive_targets(const Timetable& t);
// [rank][position] -> the position after which the op there sends its outputs to other ranks
// (from late_sends), else -1.
std::vector<std::vector<int>> late_send_targets(const Timetable& t);

// Megatron-LM's placement: virtual stage of (rank, chunk) is chunk * ranks + rank.
std::vector<std::vector<int>> looped_stage_map(int ranks, int chunks_per_rank);

// The ops that must finish before `op` on `rank` may start: the previous stage's F for F, the
// next stage's B and this stage's F for B, this stage's B for W, "previous" and "next" along the
// microbatch's path. With sequence splits, F of segment j also needs F of segment j-1 on the
// same stage, and B of segment j needs B of segment j+1 there (in place of its own F, which that
// one already follows). Same-rank dependencies are included; the caller decides which cross
// ranks (and so become transfers).
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

// Human name of an op for messages: "F(mb 3, stage 5) on rank 1"; with sequence splits
// "F(mb 1 segment 1, stage 5) on rank 1".
std::string describe(const Timetable& t, const RankOp& op);

}  // namespace hetsim

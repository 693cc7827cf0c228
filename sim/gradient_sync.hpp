#pragma once
// Data-parallel gradient synchronisation during the replay, as Megatron-core's
// DistributedDataParallel does it (megatron/core/distributed/distributed_data_parallel.py):
//   - each model chunk's gradients are split into buckets, reduced over the data-parallel
//     replicas of its pipeline rank by one collective each (all-reduce, or reduce-scatter with the
//     distributed optimizer, which then all-gathers the updated parameters after its step);
//   - with --overlap-grad-reduce a bucket is launched as soon as the backward of the chunk's last
//     microbatch has produced its gradients, so reduction overlaps the rest of the backward; without
//     it, the chunk's one bucket is launched once the rank has finished all its ops;
//   - the collectives of one pipeline rank's data-parallel group run one at a time, in launch
//     order (one NCCL communicator and stream per group); routed-expert weights reduce over their
//     expert-data-parallel group on a stream of their own, alongside the dense weights' stream;
//   - a rank's replicas step their optimizer when all its gradient collectives are done and, on
//     the two ranks sharing tied word embeddings, the embedding gradients' all-reduce between
//     them has run after both ranks' data-parallel reductions (finalize_model_grads);
//   - when the optimizer's gradient-norm group spans GPUs (sim/optimizer_sync.hpp), no rank steps
//     before every rank is ready, and then only after the group's one-float all-reduces.
// The collectives run as flows or by their alpha-beta time (sim/collective_launcher.hpp).
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/collective_launcher.hpp"
#include "sim/optimizer_sync.hpp"
#include "sim/rank_sync.hpp"
#include "sim/replay_observer.hpp"

namespace hetsim {

struct GradientSyncStats {
  std::vector<double> busy_s;     // [rank] time its gradient collectives ran, summed over its streams
  // [rank] from the rank's last op until its gradients are reduced (and all-reduced with those
  // of the ranks it shares weights with): waiting for other ranks before the step is not counted
  std::vector<double> exposed_s;
  std::vector<double> rank_pair_s;  // [pair] how long each rank-pair all-reduce ran (not in busy_s)
};

class GradientSync : public EventHandler {
 public:
  // `step_optimizer(rank)` is called when the rank's gradients are reduced and all its replicas
  // have finished their ops; it returns when the optimizer step will end (absolute time), after
  // which the parameter all-gathers run and `rank_done(rank)` is called.
  GradientSync(Engine& engine, CollectiveLauncher& launcher, const std::vector<RankSync>& ranks,
               const std::vector<RankPairAllReduce>& rank_pairs, const OptimizerSync& optimizer_sync, int replicas,
               ReplayObserver* observer,
               std::function<double(int)> step_optimizer, std::function<void(int)> rank_done);

  // How many ops of each chunk of each rank produce weight gradients (B, or W when the backward
  // is split): [rank][chunk]. Needed before the replay starts.
  void set_gradient_ops(std::vector<std::vector<int>> per_chunk);
  // On one replica of `rank`, the `occurrence`-th op (0-based) producing `chunk`'s weight
  // gradients started and lasts `seconds`; `last`: no later op of the rank produces them.
  void gradient_op_started(int rank, int chunk, int occurrence, bool last, double seconds);
  // The same for an op on gathered weights, which may stall between units: the share of its work
  // done has just gone from `from` to `to`, so the buckets completed in between are ready now.
  void gradient_op_progressed(int rank, int chunk, int occurrence, bool last, double from, double to);
  // One replica of `rank` has run all its ops, at `now`.
  void worker_finished(int rank, double now);
  void handle(const Event& event) override;

  const GradientSyncStats& stats() const { return stats_; }
  bool finished() const;

 private:
  enum EventKind : std::uint32_t { kBucketReady, kOptimizerDone, kStepEveryRank };
  // A rank's stream for one data-parallel group (0: dense weights, 1: routed-expert weights): its
  // gradients and the parameter all-gathers after the step, one collective at a time.
  struct ReduceStream {
    std::vector<int> queue;            // buckets ready on every replica, waiting for the stream
    std::size_t queued = 0;            // next index of queue to launch
    int running = -1;                  // bucket (or parameter gather) in flight
    bool gathering = false;            // the running collective is a parameter all-gather
    std::size_t next_gather = 0;       // where to look for the group's next parameter all-gather
    double started_s = 0;
    std::uint32_t slot = 0;
  };
  struct RankState {
    // [bucket][occurrence] replicas whose gradients for it are complete
    std::vector<std::vector<int>> replicas_ready;
    std::size_t gradients_expected = 0;
    ReduceStream reduce[2];            // [group]
    std::size_t gradients_done = 0;
    std::size_t gathers_done = 0;
    int replicas_finished = 0;
    double last_op_end_s = 0;
    bool ready_to_step = false;
    bool optimizer_started = false;
    bool optimizer_done = false;
  };
  // Whether the rank reduces a gradient op's buckets as the op produces them.
  bool reduces_during_op(int rank, bool last) const;
  void bucket_ready(int rank, int bucket, int occurrence);
  void launch_next(int rank, int group);
  void launch(int rank, int group, const BucketCollective& collective);
  void collective_done(int rank, int group);
  bool gradients_reduced(int rank) const;
  // Launches the rank's pair all-reduces whose two ranks are both reduced; true when all of the
  // rank's are done.
  bool rank_pairs_done(int rank);
  void rank_pair_done(std::size_t pair);
  void maybe_step(int rank);
  void step(int rank);
  void optimizer_done(int rank);

  Engine& engine_;
  std::uint32_t handler_id_;
  CollectiveLauncher& launcher_;
  const std::vector<RankSync>& ranks_;
  struct RankPairState {
    std::uint32_t slot = 0;
    bool launched = false;
    bool done = false;
    double started_s = 0;
  };
  const std::vector<RankPairAllReduce>& rank_pairs_;
  std::vector<RankPairState> pair_state_;
  std::vector<std::vector<std::size_t>> pairs_of_rank_;  // [rank] indices into rank_pairs_
  OptimizerSync optimizer_sync_;
  std::size_t ranks_ready_ = 0;
  int replicas_;
  ReplayObserver* observer_;
  std::function<double(int)> step_optimizer_;
  std::function<void(int)> rank_done_;
  std::vector<RankState> state_;
  std::vector<std::vector<std::vector<int>>> buckets_of_chunk_;  // [rank][chunk] -> buckets
  GradientSyncStats stats_;
};

}  // namespace hetsim

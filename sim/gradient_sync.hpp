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
//   - a rank's replicas step their optimizer when all its gradient collectives are done.
// A collective is simulated either as flows on the shared network, one per ring hop, each carrying
// the hop's whole share of a pipelined ring in steady state (all-reduce: 2(n-1)/n * S, delivered
// after its drain plus 2(n-1) hop latencies; reduce-scatter and all-gather: (n-1)/n * S and n-1
// latencies), so it contends max-min fairly with pipeline traffic and other rings; or, on the
// alpha-beta path, as a fixed time computed up front. On a uniform ring the two agree exactly with
// 2(n-1)/n * S/B + 2(n-1) L (tests/sim/gradient_sync_test.cpp).
//
// Weights gathered before compute. ZeRO-3 (FSDP) shards the weights too: every forward and
// backward op (not W, whose weight gradient needs only activations and output gradients)
// all-gathers its chunk's bf16 weights over the same rings, one layer (FSDP's wrapped unit) at a
// time, in the order the op runs them (backward: last layer first). Megatron's
// --overlap-param-gather moves the distributed optimizer's parameter all-gathers from after the
// optimizer step to before each chunk's first forward (of the next iteration; the replay is one
// steady iteration), one bucket at a time, the first layers' bucket first. Either way:
//   - the gathers run on a stream of their own (FSDP's all-gather stream; Megatron's separate
//     communicator), one unit at a time, one unit ahead of compute: a unit's gather starts once
//     the previous unit's gather is done and every replica has started computing on that
//     previous unit (FSDP's prefetch with its limit of two all-gathers in flight; Megatron's
//     forward pre-hook that dispatches the next bucket's all-gather);
//   - an op computes unit by unit, each for its share of the op's time, and stalls before a unit
//     whose weights have not arrived.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/replay_observer.hpp"

namespace hetsim {

// One hop of a ring: the route from a GPU to its successor, the share of the bytes that goes on
// the wire (1 / compression ratio across a compressed WAN link) and the route's latency.
struct RingHop {
  const std::vector<int>* route = nullptr;
  double wire_share = 1;
  double latency_s = 0;
};
using RingHops = std::vector<RingHop>;  // n hops for a ring of n GPUs

// One bucket's collective over the data-parallel groups of a pipeline rank.
struct BucketCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;  // all-reduce, reduce-scatter or all-gather
  double bytes = 0;          // per GPU, as nccl-tests sizes it
  int chunk = 0;             // model chunk on the rank whose gradients it carries
  double ready_fraction = 1; // share of the chunk's last gradient op after which they are complete
  int group = 0;             // index into RankSync::groups
  double alpha_beta_s = 0;   // its time on the alpha-beta path
};

// A unit of a chunk's gathered weights: the collectives that bring it (dense weights, then
// routed-expert weights) and the share of an op's compute that runs on it.
struct GatherUnit {
  std::vector<BucketCollective> collectives;
  double compute_share = 0;
};

struct RankSync {
  // [group] -> the rings that run together for one collective (one per tensor-parallel index, and
  // per expert-parallel index for expert weights), each with n >= 2 hops.
  std::vector<std::vector<RingHops>> groups;
  std::vector<BucketCollective> gradients;   // launch order
  std::vector<BucketCollective> parameters;  // all-gathers after the optimizer step
  // --overlap-grad-reduce: buckets launch during the last microbatch's backward.
  bool overlap = false;
  // ZeRO-2 and 3: gradients are sharded, not accumulated whole, so every microbatch's backward
  // reduce-scatters its buckets (as it produces them), not only the last one's.
  bool every_microbatch = false;
  // [chunk] -> the units its gathered ops compute on, in forward order: with ZeRO-3 its layers,
  // gathered before each of its forward and backward ops; with --overlap-param-gather the
  // distributed optimizer's buckets, before its first forward only. Empty otherwise.
  std::vector<std::vector<GatherUnit>> chunk_gathers;
  bool gather_before_every_op = false;  // ZeRO-3; else the first forward only
};

struct GradientSyncStats {
  std::vector<double> busy_s;     // [rank] time its gradient collectives ran, summed over its streams
  std::vector<double> exposed_s;  // [rank] from the rank's last op to its optimizer step
  std::vector<double> gather_s;   // [rank] time with a ZeRO-3 parameter gather in flight
  // [link] bytes the alpha-beta path's collectives would have put on it (flows are counted by
  // the network); sized up to the highest link used.
  std::vector<double> alpha_beta_link_bytes;
  std::uint64_t flows = 0;
};

class GradientSync : public EventHandler {
 public:
  // Flow tokens of this class carry this bit, so the network's one listener can dispatch.
  static constexpr std::uint64_t kTokenBit = std::uint64_t{1} << 63;

  // `network` null: every collective takes its alpha_beta_s. `step_optimizer(rank)` is called
  // when the rank's gradients are reduced and all its replicas have finished their ops; it returns
  // when the optimizer step will end (absolute time), after which the parameter all-gathers run
  // and `rank_done(rank)` is called.
  GradientSync(Engine& engine, Network* network, const std::vector<RankSync>& ranks, int replicas,
               ReplayObserver* observer, std::function<double(int)> step_optimizer,
               std::function<void(int)> rank_done);

  // How many ops of each chunk of each rank produce weight gradients (B, or W when the backward
  // is split): [rank][chunk]. Needed before the replay starts.
  void set_gradient_ops(std::vector<std::vector<int>> per_chunk);
  // On one replica of `rank`, the `occurrence`-th op (0-based) producing `chunk`'s weight
  // gradients started and lasts `seconds`; `last`: no later op of the rank produces them.
  void gradient_op_started(int rank, int chunk, int occurrence, bool last, double seconds);
  // The same for an op on gathered weights, which may stall between units: the share of its work
  // done has just gone from `from` to `to`, so the buckets completed in between are ready now.
  void gradient_op_progressed(int rank, int chunk, int occurrence, bool last, double from, double to);
  // An op that computes on gathered weights: its chunk, and whether it runs the chunk's units
  // backwards (a backward op).
  struct GatheredOp {
    int chunk = 0;
    bool backward = false;
  };
  // `ops[rank]` lists the rank's gathered ops in its op order (the j-th is its "gathered op j");
  // `gathered(rank)` is called whenever one of the rank's units arrives. Starts the first gather
  // of every rank.
  void set_gathered_ops(std::vector<std::vector<GatheredOp>> ops, std::function<void(int)> gathered);
  // The units of the rank's gathered op j, u-th in its compute order.
  std::size_t units(int rank, std::size_t j) const;
  const GatherUnit& unit(int rank, std::size_t j, std::size_t u) const;
  bool unit_arrived(int rank, std::size_t j, std::size_t u) const {
    return state_[rank].first_unit[j] + u < state_[rank].units_arrived;
  }
  // One replica of `rank` started computing on unit u of its gathered op j.
  void unit_started(int rank, std::size_t j, std::size_t u);
  // One replica of `rank` has run all its ops, at `now`.
  void worker_finished(int rank, double now);
  void on_flow_delivered(std::uint64_t token);
  void handle(const Event& event) override;

  const GradientSyncStats& stats() const { return stats_; }
  bool finished() const;

 private:
  enum EventKind : std::uint32_t { kBucketReady, kCollectiveDone, kOptimizerDone };
  // A rank's collective streams: one per data-parallel group (dense weights, routed-expert
  // weights; its index is the group's) for the gradients and the parameter all-gathers after the
  // step, and one for the weight gathers before ops.
  enum Stream : int { kDenseStream = 0, kExpertStream = 1, kGatherStream = 2 };
  static constexpr int kStreams = 3;
  struct ReduceStream {
    std::vector<int> queue;            // buckets ready on every replica, waiting for the stream
    std::size_t queued = 0;            // next index of queue to launch
    int running = -1;                  // bucket (or parameter gather) in flight
    bool gathering = false;            // the running collective is a parameter all-gather
    std::size_t next_gather = 0;       // where to look for the group's next parameter all-gather
  };
  struct RankState {
    // [bucket][occurrence] replicas whose gradients for it are complete
    std::vector<std::vector<int>> replicas_ready;
    std::size_t gradients_expected = 0;
    ReduceStream reduce[2];            // [group]
    int flows_pending[kStreams] = {0, 0, 0};
    double started_s[kStreams] = {0, 0, 0};
    std::size_t gradients_done = 0;
    std::size_t gathers_done = 0;
    int replicas_finished = 0;
    double last_op_end_s = 0;
    bool optimizer_started = false;
    bool optimizer_done = false;
    // Gathered ops and their units, numbered across the rank in gather order (unit p of the rank
    // is unit p - first_unit[j] of op j).
    std::vector<GatheredOp> gathered_ops;  // [j]
    std::vector<std::size_t> first_unit;   // [j]
    std::vector<int> replicas_started;     // [p]
    std::size_t units_total = 0;
    std::size_t units_arrived = 0;         // units p < units_arrived are there
    std::size_t gather_op = 0;             // op j of the unit in flight (or next)
    bool gather_running = false;
    std::size_t gather_collective = 0;     // which of the unit's collectives is in flight
  };
  // Whether the rank reduces a gradient op's buckets as the op produces them.
  bool reduces_during_op(int rank, bool last) const;
  void bucket_ready(int rank, int bucket, int occurrence);
  void launch_next(int rank, int group);
  void launch(int rank, const BucketCollective& collective, Stream stream);
  void collective_done(int rank, int group);
  void maybe_gather(int rank);
  void gather_collective_done(int rank);
  void maybe_step(int rank);
  void optimizer_done(int rank);

  Engine& engine_;
  std::uint32_t handler_id_;
  Network* network_;
  const std::vector<RankSync>& ranks_;
  int replicas_;
  ReplayObserver* observer_;
  std::function<double(int)> step_optimizer_;
  std::function<void(int)> rank_done_;
  std::function<void(int)> gathered_;
  std::vector<RankState> state_;
  std::vector<std::vector<std::vector<int>>> buckets_of_chunk_;  // [rank][chunk] -> buckets
  GradientSyncStats stats_;
};

}  // namespace hetsim

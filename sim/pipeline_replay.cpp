#include "sim/pipeline_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "base/error.hpp"
#include "sim/gradient_sync.hpp"
#include "sim/offload_plan.hpp"
#include "sim/weight_gathers.hpp"

namespace hetsim {

namespace {

enum EventKind : std::uint32_t {
  kOpDone,
  kAbstractDelivered,
  kOptimizerDone,
  kOffloadDone,
  kReloadDone
};

// Per (replica, stage, microbatch) progress flags.
enum Flag : std::uint8_t {
  kForwardDone = 1,
  kBackwardDone = 2,
  kWeightDone = 4,
  kActivationArrived = 8,  // the previous stage's output is on this stage's rank
  kGradientArrived = 16,   // the next stage's input gradient is on this stage's rank
  kOffloaded = 32,         // the activation is in host memory
  kReloaded = 64,          // the activation is back in HBM
};

// One direction of a worker's host copy engine: activations wait in order. The waiting list is a
// vector read from `next_waiting` on (emptied when all have left), not a std::deque, which
// allocates its first block even for the workers of a run without offloading.
struct CopyStream {
  std::vector<ScheduledOp> waiting;
  std::size_t next_waiting = 0;
  bool busy = false;
  ScheduledOp current;
  double start_s = 0;

  bool has_waiting() const { return next_waiting < waiting.size(); }
  const ScheduledOp& first_waiting() const { return waiting[next_waiting]; }
  void pop_waiting() {
    if (++next_waiting == waiting.size()) {
      waiting.clear();
      next_waiting = 0;
    }
  }
};

// A worker's host copy engine (PipeOffload), both directions: apart from WorkerState, and only
// for the runs that offload.
struct HostCopies {
  CopyStream offload;
  CopyStream reload;
};

// No transfer: the end of a channel's waiting list.
constexpr std::uint32_t kNoTransfer = 0xffffffffu;
constexpr std::uint32_t kNoChannel = 0xffffffffu;

// A send stream: one transfer leaves at a time, in order. In network mode the stream is busy
// while a transfer's flows drain (its bytes leave the senders) and free for the next transfer
// while the last bytes still travel the route's latency, so messages in flight pipeline as on a
// real transport and a flush pays the latency once, not once per message. In abstract mode a
// transfer holds the stream for its whole fixed time.
struct Channel {
  int src = 0;
  int dst = 0;
  TransferKind kind = TransferKind::kActivation;
  // Transfers waiting for the stream, oldest first, linked through Transfer::next_waiting.
  std::uint32_t first_waiting = kNoTransfer;
  std::uint32_t last_waiting = kNoTransfer;
  bool busy = false;
  // Network mode: the worker pair's flow routes and wire share, asked of TransferRoutes once when
  // the channel opens rather than on every transfer (the replay's send path). The routes are
  // copied into the replay's channel_routes_, the channels one after the other: from routes_at,
  // where route r ends (route_count offsets), then the routes' links end to end. A send reads
  // one or two lines beside the previous channel's, not two heap blocks of its own (BENCHMARKS.md,
  // 2026-12-06, evening).
  std::uint32_t routes_at = 0;
  std::uint32_t route_count = 0;
  double wire_share = 1;
  // Every route's Network::route_delay_s when they are all equal, as a worker pair's GPU pairs
  // crossing links of the same kinds make them; kRouteDelaysDiffer otherwise. A send then reads
  // no link latency, only the links' hot state.
  double delay_s = 0;
  // Every route's Network::window_rate_cap, when delay_s is common (routes of the same kinds).
  double rate_cap = Network::kUncapped;
};
constexpr double kRouteDelaysDiffer = -1;

// A transfer's slot is reused once it is delivered: the slots in use are those in flight, so the
// replay's working set does not grow with the iteration's transfers.
struct Transfer {
  std::uint32_t record = 0;  // 1, 2, ... in the order the transfers were sent (TransferRecord::id)
  std::uint32_t next_waiting = kNoTransfer;  // the next transfer waiting on its channel
  std::uint32_t channel = 0;
  int replica = 0;
  int dst_stage = 0;
  int microbatch = 0;
  int flows_pending = 0;   // not yet delivered
  int flows_draining = 0;  // not yet drained
  double start_s = 0;
  double drained_s = 0;
  double bytes_per_gpu = 0;
};

// A forward output held back until its overlapped pair ends.
struct HeldOutput {
  int stage = -1;
  int microbatch = 0;
  int chunk = 0;
  std::size_t position = 0;  // of the forward in its rank's list
};

// An output step() sends only after a later op of its rank (Timetable::late_sends).
struct LateOutput {
  std::size_t after = 0;  // position of the op it leaves with
  int stage = 0;          // destination stage
  int microbatch = 0;
  TransferKind kind = TransferKind::kActivation;
  int chunk = 0;
};

// A worker's state: what an op's start and end read first, then its lists. The host copy streams
// of PipeOffload are apart (HostCopies), so that a worker's state is 160 bytes.
struct WorkerState {
  std::size_t next_op = 0;
  bool busy = false;
  bool pair_second = false;  // the running/next op is the second of an overlapped pair
  // An op on gathered weights computes unit by unit: the one it is on, and whether it waits for
  // the next one's weights (no event pending).
  bool stalled = false;
  int sends_in_flight = 0;  // waiting sends (P2pSync): those of its last op not yet delivered
  std::size_t unit = 0;
  double done_share = 0;  // of the op's work, in the units before `unit`
  double op_start_s = 0;
  double op_seconds = 0;
  double pair_scale = 1;  // the running overlapped pair's time over its two ops' summed times
  double activation_bytes = 0;
  // The channels this worker sends on, with what send() looks them up by: a send reads this list
  // only, not every channel it holds.
  struct ChannelKey {
    int dst = 0;
    TransferKind kind = TransferKind::kActivation;
    std::uint32_t id = 0;
  };
  std::vector<ChannelKey> channels;
  std::vector<std::uint32_t> parked;  // transfers to this worker waiting for its receive
  std::vector<LateOutput> late_outputs;
  HeldOutput held_output;
};
static_assert(sizeof(WorkerState) <= 160, "a worker's state should stay within 160 bytes");

// The ops that produce a chunk's weight gradients (B, or W when the backward is split), by
// [rank][position]: their occurrence among the chunk's such ops on the rank (-1: none of them),
// whether it is the chunk's last (its gradients are then final), and the count per chunk.
struct GradientOps {
  std::vector<std::vector<int>> occurrence;
  std::vector<std::vector<char>> last;
  std::vector<std::vector<int>> per_chunk;  // [rank][chunk]
};

GradientOps gradient_ops(const Timetable& t) {
  const OpKind producer = t.split_backward ? OpKind::kWeight : OpKind::kBackward;
  GradientOps g;
  for (int rank = 0; rank < t.ranks; ++rank) {
    const auto& ops = t.ops[rank];
    std::vector<int> occurrence(ops.size(), -1);
    std::vector<char> last(ops.size(), 0);
    std::vector<int> count(static_cast<std::size_t>(t.chunks_per_rank), 0);
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == producer) occurrence[i] = count[ops[i].chunk]++;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (occurrence[i] >= 0 && occurrence[i] + 1 == count[ops[i].chunk]) last[i] = 1;
    g.occurrence.push_back(std::move(occurrence));
    g.last.push_back(std::move(last));
    g.per_chunk.push_back(std::move(count));
  }
  return g;
}

// The ops that compute on gathered weights, numbered in each rank's op order: [rank][position]
// -> j or -1, and [rank][j] -> the op's chunk and direction. ZeRO-3: every F and B of a chunk
// with gathers; --overlap-param-gather: each such chunk's first F.
struct GatheredOps {
  std::vector<std::vector<int>> index;
  std::vector<std::vector<WeightGathers::GatheredOp>> ops;
};

GatheredOps gathered_ops(const Timetable& t, const std::vector<RankSync>& sync) {
  GatheredOps g;
  for (int rank = 0; rank < t.ranks; ++rank) {
    const std::size_t chunks = sync[rank].chunk_gathers.size();
    const bool every_op = sync[rank].gather_before_every_op;
    std::vector<int> index(t.ops[rank].size(), -1);
    std::vector<WeightGathers::GatheredOp> ops;
    std::vector<char> forwarded(chunks, 0);
    for (std::size_t i = 0; i < t.ops[rank].size(); ++i) {
      const ScheduledOp& op = t.ops[rank][i];
      const auto chunk = static_cast<std::size_t>(op.chunk);
      if (op.kind == OpKind::kWeight || chunk >= chunks || sync[rank].chunk_gathers[chunk].empty()) continue;
      if (!every_op) {
        if (op.kind != OpKind::kForward || forwarded[chunk]) continue;
        forwarded[chunk] = 1;
      }
      index[i] = static_cast<int>(ops.size());
      ops.push_back({op.chunk, op.kind == OpKind::kBackward});
    }
    g.index.push_back(std::move(index));
    g.ops.push_back(std::move(ops));
  }
  return g;
}

// When a rank posts the receive of an input from another rank (P2pSync::kBatched): with the
// sends of the op at `after` (-1: before its first op), or, `separate`, only once they are done.
struct ReceivePost {
  int after = -1;
  bool separate = false;
};

// A rank's receives, by the chunk of its own that consumes them.
std::size_t receive_key(int chunk, int microbatch, TransferKind kind, int microbatches) {
  return (static_cast<std::size_t>(chunk) * microbatches + microbatch) * 2 +
         (kind == TransferKind::kActivation ? 0 : 1);
}

// [rank][receive_key] for each F and B of the rank: Megatron-LM posts an op's receive after the
// op before it, or ahead of that where step() waits for it early (Timetable::early_receives);
// separately where the two ops are of one kind.
std::vector<std::vector<ReceivePost>> receive_posts(const Timetable& t,
                                                    const std::vector<std::vector<int>>& early_receive) {
  std::vector<std::vector<ReceivePost>> posts;
  const std::size_t keys = static_cast<std::size_t>(t.chunks_per_rank) * t.microbatches * 2;
  for (int rank = 0; rank < t.ranks; ++rank) {
    const auto& ops = t.ops[rank];
    std::vector<ReceivePost> of_rank(keys);
    std::vector<int> after(ops.size());
    for (std::size_t q = 0; q < ops.size(); ++q) after[q] = static_cast<int>(q) - 1;
    for (std::size_t e = 0; e < ops.size(); ++e)
      if (const int ahead = early_receive[rank][e]; ahead >= 0) after[ahead] = static_cast<int>(e) - 1;
    for (std::size_t q = 0; q < ops.size(); ++q) {
      const ScheduledOp& op = ops[q];
      if (op.kind == OpKind::kWeight) continue;
      const TransferKind kind = op.kind == OpKind::kForward ? TransferKind::kActivation : TransferKind::kGradient;
      const bool separate = after[q] >= 0 && ops[after[q]].kind == op.kind;
      of_rank[receive_key(op.chunk, op.microbatch, kind, t.microbatches)] = {after[q], separate};
    }
    posts.push_back(std::move(of_rank));
  }
  return posts;
}

class PipelineReplay : public EventHandler, public FlowListener {
 public:
  explicit PipelineReplay(const ReplayInputs& in)
      : in_(in),
        t_(*in.timetable),
        ranks_(t_.ranks),
        stages_(t_.stages()),
        microbatches_(t_.microbatches),
        workers_(static_cast<std::size_t>(in.replicas * t_.ranks)),
        flags_(static_cast<std::size_t>(in.replicas) * stages_ * microbatches_, 0),
        optimizer_start_s_(workers_.size(), 0) {
    handler_id_ = engine_.add_handler(*this);
    if (in.routes != nullptr) {
      NetworkOptions options;
      options.connection_window_bytes = in.connection_window_bytes;
      network_ = std::make_unique<Network>(engine_, in.links, *this, options);
    }
    if (!in.sync.empty() && in.sync.size() != static_cast<std::size_t>(ranks_))
      throw SimulationError("gradient synchronisation needs one entry per pipeline rank");
    const std::vector<RankSync>& sync = in.sync.empty() ? no_sync_ : in.sync;
    launcher_ = std::make_unique<CollectiveLauncher>(engine_, in.alpha_beta_collectives ? nullptr : network_.get());
    sync_ = std::make_unique<GradientSync>(
        engine_, *launcher_, sync, in.rank_pairs, in.optimizer_sync, in.replicas, in.observer, [this](int rank) { return step_optimizer(rank); },
        [this](int /*rank*/) { stats_.iteration_s = std::max(stats_.iteration_s, engine_.now()); });
    gradient_ops_ = gradient_ops(t_);
    sync_->set_gradient_ops(gradient_ops_.per_chunk);
    GatheredOps gathered = gathered_ops(t_, sync);
    gathered_op_ = std::move(gathered.index);
    gathers_ = std::make_unique<WeightGathers>(engine_, *launcher_, sync, std::move(gathered.ops), in.replicas,
                                               in.observer, [this](int rank) { unit_arrived(rank); });
    stage_location_ = stage_locations(t_);
    // Neighbours along each path, [path][stage] -> stage or -1, so the hot path never searches.
    const std::size_t paths = t_.paths.empty() ? 1 : t_.paths.size();
    previous_.assign(paths, std::vector<int>(static_cast<std::size_t>(stages_), -1));
    next_.assign(paths, std::vector<int>(static_cast<std::size_t>(stages_), -1));
    for (std::size_t path = 0; path < paths; ++path) {
      std::vector<int> order;
      if (t_.paths.empty()) {
        for (int s = 0; s < stages_; ++s) order.push_back(s);
      } else {
        order = t_.paths[path];
      }
      for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        next_[path][order[i]] = order[i + 1];
        previous_[path][order[i + 1]] = order[i];
      }
    }
    pair_starts_ = pair_starts(t_);
    early_receive_ = early_receive_targets(t_);
    late_send_ = late_send_targets(t_);
    if (in.p2p != P2pSync::kAsync) receive_posts_ = receive_posts(t_, early_receive_);
    offload_ = plan_offload(t_, in.offload_fraction);
    if (!offload_.empty() && in.host_copy_bytes_per_s.size() != workers_.size())
      throw SimulationError("offloading needs a host copy bandwidth for every worker");
    if (!offload_.empty()) host_copies_.resize(workers_.size());
    const std::size_t n = workers_.size();
    stats_.busy_s.assign(n, 0);
    stats_.first_op_start_s.assign(n, -1);
    stats_.last_op_end_s.assign(n, 0);
    stats_.peak_activation_bytes.assign(n, 0);
    open_channels();
    share_cost_rows();
  }

  ReplayStats run() {
    if (in_.observer)
      for (std::size_t w = 0; w < workers_.size(); ++w)
        in_.observer->on_memory(static_cast<int>(w), 0, static_bytes(static_cast<int>(w)), 0);
    for (std::size_t w = 0; w < workers_.size(); ++w) try_start(static_cast<int>(w));
    engine_.run();
    check_finished();
    stats_.events = engine_.events_processed();
    if (network_) stats_.link_bytes = network_->link_bytes();
    const auto& alpha_beta_bytes = launcher_->alpha_beta_link_bytes();
    if (stats_.link_bytes.size() < alpha_beta_bytes.size()) stats_.link_bytes.resize(alpha_beta_bytes.size(), 0);
    for (std::size_t l = 0; l < alpha_beta_bytes.size(); ++l) stats_.link_bytes[l] += alpha_beta_bytes[l];
    stats_.sync_busy_s = sync_->stats().busy_s;
    stats_.sync_exposed_s = sync_->stats().exposed_s;
    stats_.rank_pair_s = sync_->stats().rank_pair_s;
    stats_.parameter_gather_s = gathers_->busy_s();
    stats_.flows += launcher_->flows();
    return std::move(stats_);
  }

  void handle(const Event& event) override {
    switch (event.kind) {
      case kOpDone: finish_op(static_cast<int>(event.payload)); break;
      case kAbstractDelivered: deliver(static_cast<std::uint32_t>(event.payload)); break;
      case kOptimizerDone: finish_optimizer(static_cast<int>(event.payload)); break;
      case kOffloadDone: finish_copy(static_cast<int>(event.payload), true); break;
      case kReloadDone: finish_copy(static_cast<int>(event.payload), false); break;
      default: throw SimulationError("unknown replay event kind");
    }
  }

  void on_flow_delivered(std::uint64_t token) override {
    if (token & CollectiveLauncher::kTokenBit) {
      launcher_->on_flow_delivered(token);
      return;
    }
    Transfer& transfer = transfers_[token];
    if (--transfer.flows_pending == 0) deliver(static_cast<std::uint32_t>(token));
  }

  void on_flow_drained(std::uint64_t token) override {
    if (token & CollectiveLauncher::kTokenBit) return;
    Transfer& transfer = transfers_[token];
    if (--transfer.flows_draining > 0) return;
    transfer.drained_s = engine_.now();
    start_next(transfer.channel);
  }

 private:
  double static_bytes(int worker) const {
    return in_.static_bytes.empty() ? 0.0 : in_.static_bytes[worker];
  }
  int rank_of(int worker) const { return worker % ranks_; }
  const ChunkCost& cost_of(int worker, int chunk) const { return cost_rows_[worker][chunk]; }
  int replica_of(int worker) const { return worker / ranks_; }
  int worker_of(int replica, int rank) const { return replica * ranks_ + rank; }
  std::uint8_t& flags(int replica, int stage, int microbatch) {
    return flags_[(static_cast<std::size_t>(replica) * stages_ + stage) * microbatches_ + microbatch];
  }

  int rank_of_stage(int stage) const { return stage_location_[stage].rank; }
  bool offloaded(int rank, const ScheduledOp& op) const {
    return offload_.is_offloaded(rank, op.microbatch, op.chunk, t_.chunks_per_rank);
  }

  int path_of(int microbatch) const {
    return t_.path_of_microbatch.empty() ? 0 : t_.path_of_microbatch[microbatch];
  }
  int previous_stage_of(int microbatch, int stage) const { return previous_[path_of(microbatch)][stage]; }
  int next_stage_of(int microbatch, int stage) const { return next_[path_of(microbatch)][stage]; }

  // Whether the inputs of `op` at `stage` are present (same-rank order is the timetable's).
  bool ready(int replica, int stage, const ScheduledOp& op) {
    const std::uint8_t f = flags(replica, stage, op.microbatch);
    switch (op.kind) {
      case OpKind::kForward:
        return previous_stage_of(op.microbatch, stage) < 0 || (f & kActivationArrived);
      case OpKind::kBackward:
        return (f & kForwardDone) &&
               (next_stage_of(op.microbatch, stage) < 0 || (f & kGradientArrived)) &&
               (!offloaded(rank_of_stage(stage), op) || (f & kReloaded));
      case OpKind::kWeight: return (f & kBackwardDone) != 0;
    }
    return false;
  }

  // Whether the inputs `op` on `rank` gets from other ranks are there.
  bool remote_inputs_arrived(int replica, int rank, const ScheduledOp& op) {
    const int stage = t_.stage(rank, op.chunk);
    const std::uint8_t f = flags(replica, stage, op.microbatch);
    if (op.kind == OpKind::kForward) {
      const int previous = previous_stage_of(op.microbatch, stage);
      return previous < 0 || rank_of_stage(previous) == rank || (f & kActivationArrived);
    }
    if (op.kind == OpKind::kBackward) {
      const int next = next_stage_of(op.microbatch, stage);
      return next < 0 || rank_of_stage(next) == rank || (f & kGradientArrived);
    }
    return true;
  }

  // The op at `position` is ready, and so are the inputs of the later op whose receive step()
  // posts ahead of it and waits for (Timetable::early_receives).
  bool ready_with_early_receive(int worker, std::size_t position) {
    const int rank = rank_of(worker);
    const int replica = replica_of(worker);
    const ScheduledOp& op = t_.ops[rank][position];
    if (!ready(replica, t_.stage(rank, op.chunk), op)) return false;
    const int ahead = early_receive_[rank][position];
    return ahead < 0 || remote_inputs_arrived(replica, rank, t_.ops[rank][ahead]);
  }

  // An overlapped forward-backward pair (DualPipe) starts only when both ops' inputs are there.
  bool ready_at(int worker, std::size_t position) {
    const int rank = rank_of(worker);
    if (!ready_with_early_receive(worker, position)) return false;
    // The op's first unit of gathered weights must be there (the second op of a pair waits for
    // its own when it starts, since its gather only begins once the first has started).
    if (const int j = gathered_op_[rank][position]; j >= 0 && !gathers_->unit_arrived(rank, j, 0)) return false;
    if (workers_[worker].pair_second || !pair_starts_[rank][position]) return true;
    return ready_with_early_receive(worker, position + 1);
  }

  // Expert-parallel all-to-all time inside an op's time.
  double op_all_to_all_seconds(const ChunkCost& cost, OpKind kind) const {
    switch (kind) {
      case OpKind::kForward: return cost.ep_comm_forward_s;
      case OpKind::kBackward: return cost.ep_comm_backward_s + cost.ep_comm_recompute_s;
      case OpKind::kWeight: return 0;
    }
    return 0;
  }

  // DualPipe's overlapped pair (DeepSeek-V3 report, arXiv:2412.19437, section 3.2.1 and
  // Figure 4): the forward's and the backward's all-to-alls run beside the other op's compute, on
  // communication kernels that hold 20 of the H800's 132 SMs (section 3.2.2; the H100 SXM has as
  // many), so compute runs on 112/132 of the GPU while they do. The pair takes
  // max(C, P + 20/132 C) for compute P and all-to-alls C, against P + C one after the other;
  // its two ops' times are scaled by that over their sum.
  double overlapped_pair_scale(int worker, std::size_t first) const {
    constexpr double kCommunicationSmShare = 20.0 / 132.0;
    const auto& ops = t_.ops[rank_of(worker)];
    double sum = 0, all_to_all = 0;
    for (const std::size_t position : {first, first + 1}) {
      const ScheduledOp& op = ops[position];
      const ChunkCost& cost = cost_of(worker, op.chunk);
      sum += op_seconds(cost, op.kind);
      all_to_all += op_all_to_all_seconds(cost, op.kind);
    }
    if (!(all_to_all > 0) || !(sum > 0)) return 1;
    const double compute = sum - all_to_all;
    return std::max(all_to_all, compute + kCommunicationSmShare * all_to_all) / sum;
  }

  double op_seconds(const ChunkCost& cost, OpKind kind) const {
    switch (kind) {
      case OpKind::kForward: return cost.forward_s;
      case OpKind::kBackward:
        return t_.split_backward ? cost.backward_input_s + cost.recompute_s : cost.fused_backward_s();
      case OpKind::kWeight: return cost.backward_weight_s;
    }
    return 0;
  }

  // Activation bytes an op allocates (F) or frees (B, W), as change_activations applies them.
  double activation_change(const ChunkCost& cost, OpKind kind) const {
    switch (kind) {
      case OpKind::kForward: return cost.activation_bytes;
      case OpKind::kBackward:
        return t_.split_backward ? cost.activation_bytes - cost.weight_grad_bytes : cost.activation_bytes;
      case OpKind::kWeight: return cost.weight_grad_bytes;
    }
    return 0;
  }

  double op_flops(const ChunkCost& cost, OpKind kind) const {
    switch (kind) {
      case OpKind::kForward: return cost.forward_flops;
      case OpKind::kBackward:
        return t_.split_backward
                   ? cost.backward_input_flops + cost.recompute_flops
                   : cost.backward_input_flops + cost.backward_weight_flops + cost.recompute_flops;
      case OpKind::kWeight: return cost.backward_weight_flops;
    }
    return 0;
  }

  void try_start(int worker) {
    WorkerState& state = workers_[worker];
    const int rank = rank_of(worker);
    const auto& ops = t_.ops[rank];
    if (state.busy || state.next_op >= ops.size() || state.sends_in_flight > 0) return;
    const ScheduledOp& op = ops[state.next_op];
    if (!ready_at(worker, state.next_op)) return;
    state.busy = true;
    state.op_start_s = engine_.now();
    if (stats_.first_op_start_s[worker] < 0) stats_.first_op_start_s[worker] = engine_.now();
    const ChunkCost& cost = cost_of(worker, op.chunk);
    if (op.kind == OpKind::kForward) change_activations(worker, activation_change(cost, op.kind));
    // A recomputing B re-materializes one layer's activations while it runs.
    if (op.kind == OpKind::kBackward) change_activations(worker, cost.backward_transient_bytes);
    if (!offload_.empty()) {
      for (const ScheduledOp& activation : offload_.reload_at[rank][state.next_op])
        host_copies_[worker].reload.waiting.push_back(activation);
      start_copies(worker);
    }
    const bool opens_pair = !state.pair_second && pair_starts_[rank][state.next_op];
    if (opens_pair) state.pair_scale = overlapped_pair_scale(worker, state.next_op);
    const double seconds =
        op_seconds(cost, op.kind) * (opens_pair || state.pair_second ? state.pair_scale : 1.0);
    state.op_seconds = seconds;
    state.unit = 0;
    state.done_share = 0;
    state.stalled = false;
    const int j = gathered_op_[rank][state.next_op];
    // An op on gathered weights may stall between units: finish_op hands over its gradients as its
    // units end, never before they exist.
    if (const int occurrence = gradient_ops_.occurrence[rank][state.next_op]; occurrence >= 0 && j < 0)
      sync_->gradient_op_started(rank, op.chunk, occurrence, gradient_ops_.last[rank][state.next_op],
                                 seconds);
    if (j >= 0) gathers_->unit_started(rank, j, 0);
    engine_.schedule(j >= 0 ? seconds * gathers_->unit(rank, j, 0).compute_share : seconds, handler_id_, kOpDone,
                     static_cast<std::uint64_t>(worker));
  }

  void change_activations(int worker, double delta) {
    WorkerState& state = workers_[worker];
    state.activation_bytes += delta;
    stats_.peak_activation_bytes[worker] =
        std::max(stats_.peak_activation_bytes[worker], state.activation_bytes);
    if (in_.observer)
      in_.observer->on_memory(worker, engine_.now(), static_bytes(worker), state.activation_bytes);
  }

  // Starts computing on the next unit of the worker's gathered op if its weights are there;
  // otherwise the op stalls until they arrive.
  void next_unit(int worker) {
    WorkerState& state = workers_[worker];
    const int rank = rank_of(worker);
    const int j = gathered_op_[rank][state.next_op];
    state.stalled = !gathers_->unit_arrived(rank, j, state.unit + 1);
    if (state.stalled) return;
    ++state.unit;
    gathers_->unit_started(rank, j, state.unit);
    engine_.schedule(state.op_seconds * gathers_->unit(rank, j, state.unit).compute_share, handler_id_, kOpDone,
                     static_cast<std::uint64_t>(worker));
  }

  // A unit of a rank's gathered weights arrived: stalled ops go on, idle workers may start.
  void unit_arrived(int rank) {
    for (int replica = 0; replica < in_.replicas; ++replica) {
      const int worker = worker_of(replica, rank);
      if (workers_[worker].stalled) {
        next_unit(worker);
      } else {
        try_start(worker);
      }
    }
  }

  void finish_op(int worker) {
    WorkerState& state = workers_[worker];
    const int rank = rank_of(worker);
    const int replica = replica_of(worker);
    // An op on gathered weights ends with its last unit; the gradients of each unit are there
    // when it is done.
    if (const int j = gathered_op_[rank][state.next_op]; j >= 0) {
      const bool last_unit = state.unit + 1 == gathers_->units(rank, j);
      const double done = last_unit ? 1.0 : state.done_share + gathers_->unit(rank, j, state.unit).compute_share;
      if (const int occurrence = gradient_ops_.occurrence[rank][state.next_op]; occurrence >= 0)
        sync_->gradient_op_progressed(rank, t_.ops[rank][state.next_op].chunk, occurrence,
                                      gradient_ops_.last[rank][state.next_op], state.done_share, done);
      state.done_share = done;
      if (!last_unit) {
        next_unit(worker);
        return;
      }
    }
    const std::size_t position = state.next_op;
    const ScheduledOp op = t_.ops[rank][position];
    const int stage = t_.stage(rank, op.chunk);
    const ChunkCost& cost = cost_of(worker, op.chunk);
    const double now = engine_.now();
    state.busy = false;
    ++state.next_op;
    stats_.busy_s[worker] += state.op_seconds;
    stats_.last_op_end_s[worker] = now;
    stats_.pipeline_end_s = std::max(stats_.pipeline_end_s, now);
    if (in_.observer)
      in_.observer->on_compute(ComputeRecord{worker, replica, rank, op, stage, state.op_start_s, now,
                                             op_flops(cost, op.kind), activation_change(cost, op.kind)});
    std::uint8_t& f = flags(replica, stage, op.microbatch);
    // The first op of an overlapped pair hands its output on only when the pair ends.
    const bool opens_pair = !state.pair_second && pair_starts_[rank][position];
    switch (op.kind) {
      case OpKind::kForward:
        f |= kForwardDone;
        if (offloaded(rank, op)) {
          host_copies_[worker].offload.waiting.push_back(op);
          start_copies(worker);
        }
        if (const int next = next_stage_of(op.microbatch, stage); next >= 0) {
          if (opens_pair)
            state.held_output = HeldOutput{next, op.microbatch, op.chunk, position};
          else
            emit(worker, position, next, op.microbatch, TransferKind::kActivation, op.chunk);
        }
        break;
      case OpKind::kBackward:
        f |= kBackwardDone;
        // Split backward keeps what W needs (the GEMM inputs) until W runs.
        change_activations(worker, -activation_change(cost, OpKind::kBackward) -
                                       cost.backward_transient_bytes);
        if (const int previous = previous_stage_of(op.microbatch, stage); previous >= 0)
          emit(worker, position, previous, op.microbatch, TransferKind::kGradient, op.chunk);
        break;
      case OpKind::kWeight:
        f |= kWeightDone;
        change_activations(worker, -activation_change(cost, OpKind::kWeight));
        break;
    }
    if (opens_pair) {
      state.pair_second = true;
    } else {
      // The op is done, or the pair it closes: what was held for either leaves now.
      const bool closes_pair = state.pair_second;
      state.pair_second = false;
      if (closes_pair && state.held_output.stage >= 0) {
        const HeldOutput held = state.held_output;
        state.held_output = HeldOutput{};
        emit(worker, held.position, held.stage, held.microbatch, TransferKind::kActivation, held.chunk);
      }
      send_late_outputs(worker, position);
      if (closes_pair) send_late_outputs(worker, position - 1);
    }
    if (state.next_op == t_.ops[rank].size()) sync_->worker_finished(rank, now);
    release_parked(worker);
    try_start(worker);
  }

  // Starts the next offload, and the next reload once its offload has finished.
  void start_copies(int worker) {
    HostCopies& state = host_copies_[worker];
    const int rank = rank_of(worker);
    const int replica = replica_of(worker);
    const double rate = in_.host_copy_bytes_per_s[worker];
    if (!state.offload.busy && state.offload.has_waiting()) {
      CopyStream& stream = state.offload;
      stream.current = stream.first_waiting();
      stream.pop_waiting();
      stream.busy = true;
      stream.start_s = engine_.now();
      engine_.schedule(cost_of(worker, stream.current.chunk).activation_bytes / rate, handler_id_,
                       kOffloadDone, static_cast<std::uint64_t>(worker));
    }
    if (!state.reload.busy && state.reload.has_waiting()) {
      const ScheduledOp next = state.reload.first_waiting();
      if (!(flags(replica, t_.stage(rank, next.chunk), next.microbatch) & kOffloaded)) return;
      CopyStream& stream = state.reload;
      stream.current = next;
      stream.pop_waiting();
      stream.busy = true;
      stream.start_s = engine_.now();
      const double bytes = cost_of(worker, next.chunk).activation_bytes;
      change_activations(worker, bytes);
      engine_.schedule(bytes / rate, handler_id_, kReloadDone, static_cast<std::uint64_t>(worker));
    }
  }

  void finish_copy(int worker, bool offload) {
    HostCopies& state = host_copies_[worker];
    CopyStream& stream = offload ? state.offload : state.reload;
    const ScheduledOp op = stream.current;
    const double bytes = cost_of(worker, op.chunk).activation_bytes;
    stream.busy = false;
    flags(replica_of(worker), t_.stage(rank_of(worker), op.chunk), op.microbatch) |=
        offload ? kOffloaded : kReloaded;
    if (offload) {
      change_activations(worker, -bytes);
      stats_.offloaded_bytes += bytes;
    }
    if (in_.observer)
      in_.observer->on_copy(CopyRecord{worker, offload, op, stream.start_s, engine_.now(), bytes});
    start_copies(worker);
    if (!offload) try_start(worker);
  }

  // Sends the output of the op at `position`, or holds it until the later op step() sends it
  // after (Timetable::late_sends) is done. An output for the same rank never waits.
  void emit(int worker, std::size_t position, int dst_stage, int microbatch, TransferKind kind, int chunk) {
    const int rank = rank_of(worker);
    if (const int after = late_send_[rank][position]; after >= 0 && rank_of_stage(dst_stage) != rank) {
      workers_[worker].late_outputs.push_back(
          LateOutput{static_cast<std::size_t>(after), dst_stage, microbatch, kind, chunk});
      return;
    }
    send(worker, replica_of(worker), dst_stage, microbatch, kind, cost_of(worker, chunk));
  }

  // The op at `position` is done: the outputs held for it leave, in the order they were held.
  void send_late_outputs(int worker, std::size_t position) {
    auto& held = workers_[worker].late_outputs;
    const auto leaving = std::stable_partition(held.begin(), held.end(),
                                               [position](const LateOutput& o) { return o.after != position; });
    const std::vector<LateOutput> sent(leaving, held.end());
    held.erase(leaving, held.end());
    for (const LateOutput& o : sent)
      send(worker, replica_of(worker), o.stage, o.microbatch, o.kind, cost_of(worker, o.chunk));
  }

  // Moves an output to the rank of `dst_stage`; free and immediate on the same rank.
  void send(int worker, int replica, int dst_stage, int microbatch, TransferKind kind,
            const ChunkCost& cost) {
    const int dst_worker = worker_of(replica, stage_location_[dst_stage].rank);
    if (dst_worker == worker) {
      mark_arrived(replica, dst_stage, microbatch, kind);
      return;
    }
    const std::uint32_t id = take_transfer_slot();
    transfers_[id] = Transfer{static_cast<std::uint32_t>(++sent_), kNoTransfer,
                              find_channel(worker, dst_worker, kind), replica, dst_stage, microbatch,
                              0, 0, 0, 0, cost.output_bytes};
    if (in_.p2p != P2pSync::kAsync) {
      ++workers_[worker].sends_in_flight;
      if (!receive_posted(dst_worker, id)) {
        workers_[dst_worker].parked.push_back(id);
        return;
      }
    }
    enqueue(id);
  }

  std::uint32_t take_transfer_slot() {
    if (free_transfers_.empty()) {
      transfers_.emplace_back();
      return static_cast<std::uint32_t>(transfers_.size() - 1);
    }
    const std::uint32_t id = free_transfers_.back();
    free_transfers_.pop_back();
    return id;
  }

  void enqueue(std::uint32_t id) {
    const std::uint32_t channel_id = transfers_[id].channel;
    Channel& channel = channels_[channel_id];
    if (channel.last_waiting == kNoTransfer) {
      channel.first_waiting = id;
    } else {
      transfers_[channel.last_waiting].next_waiting = id;
    }
    channel.last_waiting = id;
    if (!channel.busy) start_next(channel_id);
  }

  // Whether the worker receiving transfer `id` has posted its receive: the op before the one
  // the transfer feeds is done (and, posted separately, its own sends delivered).
  bool receive_posted(int dst_worker, std::uint32_t id) const {
    const Transfer& transfer = transfers_[id];
    const int rank = rank_of(dst_worker);
    const ReceivePost& post =
        receive_posts_[rank][receive_key(stage_location_[transfer.dst_stage].op.chunk, transfer.microbatch,
                                         channels_[transfer.channel].kind, microbatches_)];
    if (post.after < 0) return true;
    const WorkerState& state = workers_[dst_worker];
    const auto after = static_cast<std::size_t>(post.after);
    if (state.next_op != after + 1) return state.next_op > after + 1;
    if (state.busy) return true;  // the next op started, so the sends of `after` are done
    return !(post.separate && in_.p2p == P2pSync::kSeparateWithinPhase) || state.sends_in_flight == 0;
  }

  // The worker may have posted receives: the transfers waiting for them start, in order.
  void release_parked(int worker) {
    auto& parked = workers_[worker].parked;
    if (parked.empty()) return;
    // Those still waiting close up in place, in order; no allocation once the vectors have grown.
    released_.clear();
    std::size_t waiting = 0;
    for (std::uint32_t id : parked) {
      if (receive_posted(worker, id)) {
        released_.push_back(id);
      } else {
        parked[waiting++] = id;
      }
    }
    parked.resize(waiting);
    for (std::uint32_t id : released_) enqueue(id);
  }

  // A worker whose costs equal those of the replica before it on its rank reads that replica's
  // row (so a run of equal replicas reads its first one's): the replicas of a homogeneous cluster
  // then share one row per rank, a few lines the event loop keeps in cache, where a row of each
  // worker's own put 2 MiB of them at 65,536 GPUs beside the links and flows (BENCHMARKS.md,
  // 2026-12-06, evening).
  void share_cost_rows() {
    if (in_.costs.size() != workers_.size())
      throw SimulationError(fmt::format("the replay needs the costs of {} workers, got {}", workers_.size(),
                                        in_.costs.size()));
    cost_rows_.resize(workers_.size());
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      const std::vector<ChunkCost>& row = in_.costs[w];
      const std::size_t before = w >= static_cast<std::size_t>(ranks_) ? w - ranks_ : w;
      const bool shared = before != w && in_.costs[before] == row;
      cost_rows_[w] = shared ? cost_rows_[before] : row.data();
    }
  }

  // Opens every send channel before the replay runs, so that the event loop never composes a
  // route: activations go to the next stage of a path, gradients to the previous one.
  void open_channels() {
    for (const std::vector<int>& stage_after : next_)
      for (int stage = 0; stage < stages_; ++stage) {
        const int next = stage_after[stage];
        if (next < 0 || rank_of_stage(next) == rank_of_stage(stage)) continue;
        for (int replica = 0; replica < in_.replicas; ++replica) {
          const int from = worker_of(replica, rank_of_stage(stage));
          const int to = worker_of(replica, rank_of_stage(next));
          open_channel(from, to, TransferKind::kActivation);
          open_channel(to, from, TransferKind::kGradient);
        }
      }
  }

  // The channel from `src` to `dst` of `kind`, or kNoChannel.
  std::uint32_t channel_id(int src, int dst, TransferKind kind) const {
    for (const WorkerState::ChannelKey& key : workers_[src].channels)
      if (key.dst == dst && key.kind == kind) return key.id;
    return kNoChannel;
  }

  // The channel a send leaves on, which open_channels opened: the flows in flight point into
  // channel_routes_, which must not move while the replay runs.
  std::uint32_t find_channel(int src, int dst, TransferKind kind) const {
    const std::uint32_t id = channel_id(src, dst, kind);
    if (id == kNoChannel)
      throw SimulationError(fmt::format(
          "invariant broken: worker {} sends to worker {}, with which it has no channel", src, dst));
    return id;
  }

  void open_channel(int src, int dst, TransferKind kind) {
    if (channel_id(src, dst, kind) != kNoChannel) return;
    const auto id = static_cast<std::uint32_t>(channels_.size());
    Channel& channel = channels_.emplace_back();
    channel.src = src;
    channel.dst = dst;
    channel.kind = kind;
    if (network_) {
      const std::vector<std::span<const int>>& routes = in_.routes->routes(src, dst);
      channel.routes_at = static_cast<std::uint32_t>(channel_routes_.size());
      channel.route_count = static_cast<std::uint32_t>(routes.size());
      int end = 0;
      for (const std::span<const int> route : routes) channel_routes_.push_back(end += static_cast<int>(route.size()));
      for (const std::span<const int> route : routes) channel_routes_.insert(channel_routes_.end(), route.begin(), route.end());
      channel.wire_share = in_.routes->wire_share(src, dst);
      channel.delay_s = common_route_delay_s(routes);
      if (channel.delay_s != kRouteDelaysDiffer && !routes.empty())
        channel.rate_cap = network_->window_rate_cap(routes[0]);
    }
    workers_[src].channels.push_back({dst, kind, id});
  }

  // Network::route_delay_s of every route when they are all equal, and so are their window
  // caps; kRouteDelaysDiffer otherwise.
  double common_route_delay_s(const std::vector<std::span<const int>>& routes) const {
    if (routes.empty()) return 0;
    const double common = network_->route_delay_s(routes[0]);
    const double cap = network_->window_rate_cap(routes[0]);
    for (std::size_t r = 1; r < routes.size(); ++r)
      if (network_->route_delay_s(routes[r]) != common || network_->window_rate_cap(routes[r]) != cap)
        return kRouteDelaysDiffer;
    return common;
  }

  // Starts the channel's next transfers: one in abstract mode, or in network mode as many as
  // drain at once (those with nothing to drain leave the channel free at once).
  void start_next(std::uint32_t channel_id) {
    Channel& channel = channels_[channel_id];
    while (channel.first_waiting != kNoTransfer) {
      channel.busy = true;
      const std::uint32_t id = channel.first_waiting;
      Transfer& transfer = transfers_[id];
      channel.first_waiting = transfer.next_waiting;
      if (channel.first_waiting == kNoTransfer) channel.last_waiting = kNoTransfer;
      transfer.start_s = engine_.now();
      ++stats_.transfers;
      if (!network_) {
        engine_.schedule(in_.abstract_transfer_s, handler_id_, kAbstractDelivered, id);
        return;
      }
      transfer.bytes_per_gpu *= channel.wire_share;
      transfer.flows_pending = static_cast<int>(channel.route_count);
      transfer.flows_draining = 0;
      const int* const ends = channel_routes_.data() + channel.routes_at;
      const int* const links = ends + channel.route_count;
      const int link_count = channel.route_count == 0 ? 0 : ends[channel.route_count - 1];
      network_->prefetch_links({links, static_cast<std::size_t>(link_count)});
      int begin = 0;
      for (std::uint32_t r = 0; r < channel.route_count; ++r) {
        ++stats_.flows;
        const std::span<const int> route(links + begin, static_cast<std::size_t>(ends[r] - begin));
        const bool draining =
            channel.delay_s == kRouteDelaysDiffer
                ? network_->start_flow(route, transfer.bytes_per_gpu, id, 0,
                                       network_->window_rate_cap(route))
                : network_->start_flow_after(route, channel.delay_s, transfer.bytes_per_gpu, id,
                                             channel.rate_cap);
        if (draining) ++transfer.flows_draining;
        begin = ends[r];
      }
      if (transfer.flows_draining > 0) return;
      transfer.drained_s = engine_.now();
    }
    channel.busy = false;
  }

  void deliver(std::uint32_t id) {
    Transfer& transfer = transfers_[id];
    const Channel& channel = channels_[transfer.channel];
    ++delivered_;
    if (!network_) transfer.drained_s = engine_.now();
    if (in_.observer)
      in_.observer->on_transfer(TransferRecord{transfer.record, channel.src, channel.dst, channel.kind,
                                               transfer.microbatch, transfer.dst_stage,
                                               transfer.start_s, transfer.drained_s, engine_.now(),
                                               transfer.bytes_per_gpu});
    mark_arrived(transfer.replica, transfer.dst_stage, transfer.microbatch, channel.kind);
    if (!network_) start_next(transfer.channel);
    // Every flow of the transfer has drained and arrived: its slot is free for the sends below.
    free_transfers_.push_back(id);
    try_start(channel.dst);
    if (in_.p2p != P2pSync::kAsync && --workers_[channel.src].sends_in_flight == 0) {
      release_parked(channel.src);
      try_start(channel.src);
    }
  }

  void mark_arrived(int replica, int stage, int microbatch, TransferKind kind) {
    flags(replica, stage, microbatch) |=
        kind == TransferKind::kActivation ? kActivationArrived : kGradientArrived;
  }

  // Every replica of `rank` steps its optimizer now; returns when the slowest is done.
  double step_optimizer(int rank) {
    double end = engine_.now();
    for (int replica = 0; replica < in_.replicas; ++replica) {
      const int worker = worker_of(replica, rank);
      optimizer_start_s_[worker] = engine_.now();
      const double seconds = optimizer_seconds(worker);
      end = std::max(end, engine_.now() + seconds);
      engine_.schedule(seconds, handler_id_, kOptimizerDone, static_cast<std::uint64_t>(worker));
    }
    return end;
  }

  void finish_optimizer(int worker) {
    ++optimizers_done_;
    if (in_.observer && engine_.now() > optimizer_start_s_[worker])
      in_.observer->on_phase(PhaseRecord{worker, PhaseKind::kOptimizer, optimizer_start_s_[worker],
                                         engine_.now(), 0});
    stats_.iteration_s = std::max(stats_.iteration_s, engine_.now());
  }

  double optimizer_seconds(int worker) const {
    double s = 0;
    for (const ChunkCost& cost : in_.costs[worker]) s += cost.optimizer_step_s;
    return s;
  }

  // What the first stuck worker waits for, following the chain until it repeats.
  std::string describe_wait(int worker) {
    std::string chain;
    std::vector<char> seen(workers_.size(), 0);
    while (worker >= 0 && !seen[worker]) {
      seen[worker] = 1;
      const int rank = rank_of(worker);
      const int replica = replica_of(worker);
      const auto& ops = t_.ops[rank];
      if (workers_[worker].next_op >= ops.size()) break;
      const ScheduledOp op = ops[workers_[worker].next_op];
      const int stage = t_.stage(rank, op.chunk);
      if (workers_[worker].sends_in_flight > 0) {
        if (!chain.empty()) chain += ", which ";
        chain += fmt::format("{} (replica {}) waits for its sends to be received", describe(t_, RankOp{rank, op}),
                             replica);
        break;
      }
      // Its own inputs, or those of the later op whose receive it waits for ahead.
      const int ahead = early_receive_[rank][workers_[worker].next_op];
      const bool own_inputs = ready(replica, stage, op);
      const ScheduledOp waiting = own_inputs && ahead >= 0 ? ops[ahead] : op;
      const int waiting_stage = t_.stage(rank, waiting.chunk);
      const std::uint8_t f = flags(replica, waiting_stage, waiting.microbatch);
      const int previous = previous_stage_of(waiting.microbatch, waiting_stage);
      const int next = next_stage_of(waiting.microbatch, waiting_stage);
      RankOp needed{rank, waiting};
      if (own_inputs && ahead < 0) {
        if (!chain.empty()) chain += ", which ";
        chain += fmt::format("{} (replica {}) waits for its gathered weights or host copies",
                             describe(t_, RankOp{rank, op}), replica);
        break;
      }
      if (waiting.kind == OpKind::kForward && previous >= 0) {
        needed = RankOp{stage_location_[previous].rank,
                        {OpKind::kForward, waiting.microbatch, stage_location_[previous].op.chunk}};
      } else if (waiting.kind == OpKind::kBackward && !(f & kForwardDone)) {
        needed = RankOp{rank, {OpKind::kForward, waiting.microbatch, waiting.chunk}};
      } else if (waiting.kind == OpKind::kBackward && next >= 0) {
        needed = RankOp{stage_location_[next].rank,
                        {OpKind::kBackward, waiting.microbatch, stage_location_[next].op.chunk}};
      } else {
        needed = RankOp{rank, {OpKind::kBackward, waiting.microbatch, waiting.chunk}};
      }
      if (!chain.empty()) chain += ", which ";
      chain += fmt::format("{} (replica {}) waits for {}", describe(t_, RankOp{rank, op}), replica,
                           describe(t_, needed));
      worker = needed.rank == rank ? -1 : worker_of(replica, needed.rank);
    }
    return chain;
  }

  void check_finished() {
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      if (workers_[w].next_op < t_.ops[rank_of(static_cast<int>(w))].size())
        throw SimulationError("the replay cannot finish: " + describe_wait(static_cast<int>(w)));
    }
    if (delivered_ != sent_)
      throw SimulationError(fmt::format("invariant broken: {} transfers sent, {} received", sent_,
                                        delivered_));
    if (network_ && network_->active_flows() != 0)
      throw SimulationError("invariant broken: flows still active at the end of the iteration");
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      const double left = workers_[w].activation_bytes;
      const double scale = std::max(1.0, stats_.peak_activation_bytes[w]);
      if (std::fabs(left) > 1e-9 * scale)
        throw SimulationError(fmt::format(
            "invariant broken: worker {} ends the iteration holding {} activation bytes", w, left));
    }
    for (const WorkerState& state : workers_)
      if (!state.late_outputs.empty())
        throw SimulationError("invariant broken: outputs held for a late send never left");
    for (const HostCopies& state : host_copies_)
      if (state.offload.busy || state.reload.busy || state.offload.has_waiting() ||
          state.reload.has_waiting())
        throw SimulationError("invariant broken: activations left in host memory at the end of the iteration");
    if (optimizers_done_ != workers_.size() || !sync_->finished() || !gathers_->finished())
      throw SimulationError("invariant broken: not every rank reduced its gradients and stepped its optimizer");
    if (engine_.events_pending() != 0)
      throw SimulationError("invariant broken: events left in the queue");
  }

  const ReplayInputs& in_;
  const Timetable& t_;
  const int ranks_;
  const int stages_;
  const int microbatches_;
  Engine engine_;
  std::uint32_t handler_id_ = 0;
  std::unique_ptr<Network> network_;
  std::vector<WorkerState> workers_;
  std::vector<HostCopies> host_copies_;  // [worker] when the run offloads activations, else empty
  std::vector<std::uint8_t> flags_;
  std::vector<RankOp> stage_location_;  // [stage] -> (rank, chunk)
  std::vector<std::vector<int>> previous_;  // [path][stage]
  std::vector<std::vector<int>> next_;      // [path][stage]
  std::vector<std::vector<char>> pair_starts_;  // [rank][position]
  std::vector<std::vector<int>> early_receive_;  // [rank][position] -> later position or -1
  std::vector<std::vector<int>> late_send_;      // [rank][position] -> later position or -1
  std::vector<std::vector<ReceivePost>> receive_posts_;  // [rank][receive_key]
  OffloadPlan offload_;
  std::vector<Channel> channels_;
  std::vector<int> channel_routes_;  // the channels' routes (Channel::routes_at), filled before the loop
  std::vector<const ChunkCost*> cost_rows_;  // [worker] -> its costs by chunk (share_cost_rows)
  std::vector<Transfer> transfers_;           // slots of the transfers in flight and free ones
  std::vector<std::uint32_t> free_transfers_;  // delivered transfers' slots, reused last in first
  std::size_t sent_ = 0;
  std::vector<std::uint32_t> released_;  // release_parked's scratch (enqueue never re-enters it)
  std::size_t delivered_ = 0;
  std::vector<double> optimizer_start_s_;
  const std::vector<RankSync> no_sync_ = std::vector<RankSync>(static_cast<std::size_t>(ranks_));
  std::unique_ptr<CollectiveLauncher> launcher_;
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<WeightGathers> gathers_;
  GradientOps gradient_ops_;
  std::vector<std::vector<int>> gathered_op_;  // [rank][position] -> gathered op j or -1
  std::size_t optimizers_done_ = 0;
  ReplayStats stats_;
};

}  // namespace

ReplayStats replay_iteration(const ReplayInputs& inputs) {
  if (inputs.timetable == nullptr) throw SimulationError("replay without a timetable");
  PipelineReplay replay(inputs);
  return replay.run();
}

}  // namespace hetsim

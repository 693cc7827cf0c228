#include "sim/gradient_sync.hpp"

#include <algorithm>

#include "base/error.hpp"
#include "sim/ring_collective.hpp"

namespace hetsim {

namespace {

// An event's payload: rank (bits 40-62), bucket (bits 20-39), occurrence (bits 0-19).
constexpr std::uint64_t kField = (1u << 20) - 1;
std::uint64_t pack(int rank, int bucket = 0, int occurrence = 0) {
  return (static_cast<std::uint64_t>(rank) << 40) | (static_cast<std::uint64_t>(bucket) << 20) |
         static_cast<std::uint64_t>(occurrence);
}
int rank_of(std::uint64_t payload) { return static_cast<int>((payload & ~GradientSync::kTokenBit) >> 40); }

}  // namespace

GradientSync::GradientSync(Engine& engine, Network* network, const std::vector<RankSync>& ranks,
                           int replicas, ReplayObserver* observer,
                           std::function<double(int)> step_optimizer,
                           std::function<void(int)> rank_done)
    : engine_(engine),
      handler_id_(engine.add_handler(*this)),
      network_(network),
      ranks_(ranks),
      replicas_(replicas),
      observer_(observer),
      step_optimizer_(std::move(step_optimizer)),
      rank_done_(std::move(rank_done)),
      state_(ranks.size()),
      buckets_of_chunk_(ranks.size()) {
  stats_.busy_s.assign(ranks.size(), 0);
  stats_.exposed_s.assign(ranks.size(), 0);
  stats_.gather_s.assign(ranks.size(), 0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    state_[r].replicas_ready.resize(ranks[r].gradients.size());
    for (std::size_t b = 0; b < ranks[r].gradients.size(); ++b) {
      const BucketCollective& bucket = ranks[r].gradients[b];
      if (bucket.group < 0 || bucket.group > kExpertStream ||
          static_cast<std::size_t>(bucket.group) >= ranks[r].groups.size())
        throw SimulationError("gradient bucket refers to a data-parallel group that does not exist");
      auto& chunks = buckets_of_chunk_[r];
      if (chunks.size() <= static_cast<std::size_t>(bucket.chunk)) chunks.resize(bucket.chunk + 1);
      chunks[bucket.chunk].push_back(static_cast<int>(b));
    }
  }
}

void GradientSync::set_gradient_ops(std::vector<std::vector<int>> per_chunk) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    RankState& state = state_[r];
    state.gradients_expected = 0;
    for (std::size_t b = 0; b < ranks_[r].gradients.size(); ++b) {
      const std::size_t chunk = static_cast<std::size_t>(ranks_[r].gradients[b].chunk);
      const int ops = chunk < per_chunk[r].size() ? per_chunk[r][chunk] : 0;
      if (ops < 1) throw SimulationError("a gradient bucket's chunk has no backward op on its rank");
      const int times = ranks_[r].every_microbatch ? ops : 1;
      state.replicas_ready[b].assign(static_cast<std::size_t>(times), 0);
      state.gradients_expected += static_cast<std::size_t>(times);
    }
  }
}

bool GradientSync::reduces_during_op(int rank, bool last) const {
  return ranks_[rank].every_microbatch || (ranks_[rank].overlap && last);
}

void GradientSync::gradient_op_started(int rank, int chunk, int occurrence, bool last, double seconds) {
  const auto& chunks = buckets_of_chunk_[rank];
  if (!reduces_during_op(rank, last) || static_cast<std::size_t>(chunk) >= chunks.size()) return;
  const RankSync& sync = ranks_[rank];
  for (int bucket : chunks[chunk])
    engine_.schedule(seconds * sync.gradients[bucket].ready_fraction, handler_id_, kBucketReady,
                     pack(rank, bucket, sync.every_microbatch ? occurrence : 0));
}

void GradientSync::gradient_op_progressed(int rank, int chunk, int occurrence, bool last, double from,
                                          double to) {
  const auto& chunks = buckets_of_chunk_[rank];
  if (!reduces_during_op(rank, last) || static_cast<std::size_t>(chunk) >= chunks.size()) return;
  const RankSync& sync = ranks_[rank];
  for (int bucket : chunks[chunk])
    if (const double ready = sync.gradients[bucket].ready_fraction; ready > from && ready <= to)
      engine_.schedule(0, handler_id_, kBucketReady, pack(rank, bucket, sync.every_microbatch ? occurrence : 0));
}

void GradientSync::set_gathered_ops(std::vector<std::vector<GatheredOp>> ops,
                                    std::function<void(int)> gathered) {
  gathered_ = std::move(gathered);
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    RankState& state = state_[r];
    state.gathered_ops = std::move(ops[r]);
    state.first_unit.clear();
    state.units_total = 0;
    for (const GatheredOp& op : state.gathered_ops) {
      if (op.chunk < 0 || static_cast<std::size_t>(op.chunk) >= ranks_[r].chunk_gathers.size() ||
          ranks_[r].chunk_gathers[op.chunk].empty())
        throw SimulationError("a gathered op's chunk has no weights to gather");
      state.first_unit.push_back(state.units_total);
      state.units_total += ranks_[r].chunk_gathers[op.chunk].size();
    }
    state.replicas_started.assign(state.units_total, 0);
    maybe_gather(static_cast<int>(r));
  }
}

std::size_t GradientSync::units(int rank, std::size_t j) const {
  return ranks_[rank].chunk_gathers[state_[rank].gathered_ops[j].chunk].size();
}

const GatherUnit& GradientSync::unit(int rank, std::size_t j, std::size_t u) const {
  const GatheredOp& op = state_[rank].gathered_ops[j];
  const auto& units = ranks_[rank].chunk_gathers[op.chunk];
  return units[op.backward ? units.size() - 1 - u : u];
}

void GradientSync::unit_started(int rank, std::size_t j, std::size_t u) {
  if (++state_[rank].replicas_started[state_[rank].first_unit[j] + u] == replicas_) maybe_gather(rank);
}

void GradientSync::maybe_gather(int rank) {
  RankState& state = state_[rank];
  const std::size_t p = state.units_arrived;
  if (state.gather_running || p >= state.units_total || (p > 0 && state.replicas_started[p - 1] < replicas_))
    return;
  while (state.gather_op + 1 < state.first_unit.size() && state.first_unit[state.gather_op + 1] <= p)
    ++state.gather_op;
  state.gather_running = true;
  state.gather_collective = 0;
  const GatherUnit& next = unit(rank, state.gather_op, p - state.first_unit[state.gather_op]);
  launch(rank, next.collectives.front(), kGatherStream);
}

void GradientSync::gather_collective_done(int rank) {
  RankState& state = state_[rank];
  const GatherUnit& current = unit(rank, state.gather_op, state.units_arrived - state.first_unit[state.gather_op]);
  const BucketCollective& done = current.collectives[state.gather_collective];
  stats_.gather_s[rank] += engine_.now() - state.started_s[kGatherStream];
  if (observer_)
    for (int replica = 0; replica < replicas_; ++replica)
      observer_->on_phase(PhaseRecord{replica * static_cast<int>(ranks_.size()) + rank,
                                      PhaseKind::kWeightGather, state.started_s[kGatherStream],
                                      engine_.now(), done.bytes, done.op});
  if (++state.gather_collective < current.collectives.size()) {
    launch(rank, current.collectives[state.gather_collective], kGatherStream);
    return;
  }
  state.gather_running = false;
  ++state.units_arrived;
  maybe_gather(rank);
  gathered_(rank);
}

void GradientSync::worker_finished(int rank, double now) {
  RankState& state = state_[rank];
  state.last_op_end_s = std::max(state.last_op_end_s, now);
  if (++state.replicas_finished < replicas_) return;
  // Without overlap, every bucket launches now, in order; with it, they are already on their way.
  if (!ranks_[rank].overlap && !ranks_[rank].every_microbatch) {
    const auto& buckets = ranks_[rank].gradients;
    for (std::size_t b = 0; b < buckets.size(); ++b) state.reduce[buckets[b].group].queue.push_back(static_cast<int>(b));
    launch_next(rank, kDenseStream);
    launch_next(rank, kExpertStream);
  }
  maybe_step(rank);
}

void GradientSync::handle(const Event& event) {
  const int rank = rank_of(event.payload);
  switch (event.kind) {
    case kBucketReady:
      bucket_ready(rank, static_cast<int>((event.payload >> 20) & kField),
                   static_cast<int>(event.payload & kField));
      break;
    case kCollectiveDone:
      if (const auto stream = static_cast<int>((event.payload >> 20) & kField); stream == kGatherStream) {
        gather_collective_done(rank);
      } else {
        collective_done(rank, stream);
      }
      break;
    case kOptimizerDone: optimizer_done(rank); break;
    default: throw SimulationError("unknown gradient synchronisation event kind");
  }
}

void GradientSync::on_flow_delivered(std::uint64_t token) {
  const int rank = rank_of(token);
  const auto stream = static_cast<Stream>((token >> 20) & kField);
  if (--state_[rank].flows_pending[stream] > 0) return;
  if (stream == kGatherStream) {
    gather_collective_done(rank);
  } else {
    collective_done(rank, stream);
  }
}

void GradientSync::bucket_ready(int rank, int bucket, int occurrence) {
  RankState& state = state_[rank];
  // The collective starts once every replica has the bucket's gradients (NCCL's rendezvous).
  if (++state.replicas_ready[bucket][occurrence] < replicas_) return;
  const int group = ranks_[rank].gradients[bucket].group;
  state.reduce[group].queue.push_back(bucket);
  launch_next(rank, group);
}

void GradientSync::launch_next(int rank, int group) {
  RankState& state = state_[rank];
  ReduceStream& stream = state.reduce[group];
  if (stream.running >= 0) return;
  const RankSync& sync = ranks_[rank];
  if (stream.queued < stream.queue.size()) {
    stream.running = stream.queue[stream.queued++];
    stream.gathering = false;
    launch(rank, sync.gradients[stream.running], static_cast<Stream>(group));
    return;
  }
  if (!state.optimizer_done) return;
  while (stream.next_gather < sync.parameters.size() && sync.parameters[stream.next_gather].group != group)
    ++stream.next_gather;
  if (stream.next_gather == sync.parameters.size()) return;
  stream.running = static_cast<int>(stream.next_gather++);
  stream.gathering = true;
  launch(rank, sync.parameters[stream.running], static_cast<Stream>(group));
}

void GradientSync::launch(int rank, const BucketCollective& collective, Stream stream) {
  RankState& state = state_[rank];
  state.started_s[stream] = engine_.now();
  int& pending = state.flows_pending[stream];
  pending = 0;
  for (const RingHops& ring : ranks_[rank].groups[collective.group]) {
    const RingLoad load = ring_load(collective.op, static_cast<int>(ring.size()), collective.bytes);
    for (const RingHop& hop : ring) {
      if (network_ == nullptr) {
        auto& bytes = stats_.alpha_beta_link_bytes;
        for (int link : *hop.route) {
          if (bytes.size() <= static_cast<std::size_t>(link)) bytes.resize(link + 1, 0);
          bytes[link] += load.hop_bytes * hop.wire_share;
        }
        continue;
      }
      ++pending;
      ++stats_.flows;
      // The network adds the route's latency once; the other steps' latencies come on top.
      network_->start_flow(*hop.route, load.hop_bytes * hop.wire_share, kTokenBit | pack(rank, stream),
                           (load.steps - 1) * hop.latency_s);
    }
  }
  if (pending == 0)
    engine_.schedule(network_ == nullptr ? collective.alpha_beta_s : 0, handler_id_, kCollectiveDone,
                     pack(rank, stream));
}

void GradientSync::collective_done(int rank, int group) {
  RankState& state = state_[rank];
  ReduceStream& stream = state.reduce[group];
  const RankSync& sync = ranks_[rank];
  const BucketCollective& done = stream.gathering ? sync.parameters[stream.running] : sync.gradients[stream.running];
  stats_.busy_s[rank] += engine_.now() - state.started_s[group];
  if (observer_)
    for (int replica = 0; replica < replicas_; ++replica)
      observer_->on_phase(PhaseRecord{replica * static_cast<int>(ranks_.size()) + rank,
                                      stream.gathering ? PhaseKind::kParameterGather : PhaseKind::kGradientReduce,
                                      state.started_s[group], engine_.now(), done.bytes, done.op,
                                      group == kExpertStream});
  stream.running = -1;
  if (stream.gathering) {
    if (++state.gathers_done == sync.parameters.size()) rank_done_(rank);
  } else {
    ++state.gradients_done;
    maybe_step(rank);
  }
  launch_next(rank, group);
}

void GradientSync::maybe_step(int rank) {
  RankState& state = state_[rank];
  if (state.optimizer_started || state.replicas_finished < replicas_ ||
      state.gradients_done < state.gradients_expected)
    return;
  state.optimizer_started = true;
  stats_.exposed_s[rank] = engine_.now() - state.last_op_end_s;
  const double end = step_optimizer_(rank);
  engine_.schedule(std::max(0.0, end - engine_.now()), handler_id_, kOptimizerDone, pack(rank));
}

void GradientSync::optimizer_done(int rank) {
  state_[rank].optimizer_done = true;
  if (ranks_[rank].parameters.empty()) {
    rank_done_(rank);
    return;
  }
  launch_next(rank, kDenseStream);
  launch_next(rank, kExpertStream);
}

bool GradientSync::finished() const {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankState& s = state_[r];
    if (!s.optimizer_done || s.reduce[kDenseStream].running >= 0 || s.reduce[kExpertStream].running >= 0 ||
        s.gathers_done < ranks_[r].parameters.size() ||
        s.units_arrived < s.units_total)
      return false;
  }
  return true;
}

}  // namespace hetsim

#include "sim/gradient_sync.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace hetsim {

namespace {

// An event's payload: rank (bits 40-63), bucket (bits 20-39), occurrence (bits 0-19).
constexpr std::uint64_t kField = (1u << 20) - 1;
std::uint64_t pack(int rank, int bucket = 0, int occurrence = 0) {
  return (static_cast<std::uint64_t>(rank) << 40) | (static_cast<std::uint64_t>(bucket) << 20) |
         static_cast<std::uint64_t>(occurrence);
}
int rank_of(std::uint64_t payload) { return static_cast<int>(payload >> 40); }

}  // namespace

GradientSync::GradientSync(Engine& engine, CollectiveLauncher& launcher, const std::vector<RankSync>& ranks,
                           const std::vector<RankPairAllReduce>& rank_pairs, const OptimizerSync& optimizer_sync,
                           int replicas, ReplayObserver* observer,
                           std::function<double(int)> step_optimizer, std::function<void(int)> rank_done)
    : engine_(engine),
      handler_id_(engine.add_handler(*this)),
      launcher_(launcher),
      ranks_(ranks),
      rank_pairs_(rank_pairs),
      pair_state_(rank_pairs.size()),
      pairs_of_rank_(ranks.size()),
      optimizer_sync_(optimizer_sync),
      replicas_(replicas),
      observer_(observer),
      step_optimizer_(std::move(step_optimizer)),
      rank_done_(std::move(rank_done)),
      state_(ranks.size()),
      buckets_of_chunk_(ranks.size()) {
  stats_.busy_s.assign(ranks.size(), 0);
  stats_.exposed_s.assign(ranks.size(), 0);
  stats_.rank_pair_s.assign(rank_pairs.size(), 0);
  for (std::size_t p = 0; p < rank_pairs.size(); ++p) {
    const auto valid = [&](int rank) { return rank >= 0 && static_cast<std::size_t>(rank) < ranks.size(); };
    const RankPairAllReduce& pair = rank_pairs[p];
    if (!valid(pair.ranks[0]) || !valid(pair.ranks[1]) || pair.ranks[0] == pair.ranks[1])
      throw SimulationError("a gradient all-reduce between two pipeline ranks refers to a rank that does not exist");
    pair_state_[p].slot = launcher_.add_slot([this, p] { rank_pair_done(p); });
    for (const int rank : pair.ranks) pairs_of_rank_[rank].push_back(p);
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (int group = 0; group < 2; ++group)
      state_[r].reduce[group].slot =
          launcher_.add_slot([this, rank = static_cast<int>(r), group] { collective_done(rank, group); });
    state_[r].replicas_ready.resize(ranks[r].gradients.size());
    for (std::size_t b = 0; b < ranks[r].gradients.size(); ++b) {
      const BucketCollective& bucket = ranks[r].gradients[b];
      if (bucket.group < 0 || bucket.group > 1 ||
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

void GradientSync::worker_finished(int rank, double now) {
  RankState& state = state_[rank];
  state.last_op_end_s = std::max(state.last_op_end_s, now);
  if (++state.replicas_finished < replicas_) return;
  // Without overlap, every bucket launches now, in order; with it, they are already on their way.
  if (!ranks_[rank].overlap && !ranks_[rank].every_microbatch) {
    const auto& buckets = ranks_[rank].gradients;
    for (std::size_t b = 0; b < buckets.size(); ++b) state.reduce[buckets[b].group].queue.push_back(static_cast<int>(b));
    launch_next(rank, 0);
    launch_next(rank, 1);
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
    case kOptimizerDone: optimizer_done(rank); break;
    case kStepEveryRank:
      for (std::size_t r = 0; r < ranks_.size(); ++r) step(static_cast<int>(r));
      break;
    default: throw SimulationError("unknown gradient synchronisation event kind");
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
    launch(rank, group, sync.gradients[stream.running]);
    return;
  }
  if (!state.optimizer_done) return;
  while (stream.next_gather < sync.parameters.size() && sync.parameters[stream.next_gather].group != group)
    ++stream.next_gather;
  if (stream.next_gather == sync.parameters.size()) return;
  stream.running = static_cast<int>(stream.next_gather++);
  stream.gathering = true;
  launch(rank, group, sync.parameters[stream.running]);
}

void GradientSync::launch(int rank, int group, const BucketCollective& collective) {
  ReduceStream& stream = state_[rank].reduce[group];
  stream.started_s = engine_.now();
  launcher_.launch(stream.slot, ranks_[rank].groups[collective.group], collective);
}

void GradientSync::collective_done(int rank, int group) {
  RankState& state = state_[rank];
  ReduceStream& stream = state.reduce[group];
  const RankSync& sync = ranks_[rank];
  const BucketCollective& done = stream.gathering ? sync.parameters[stream.running] : sync.gradients[stream.running];
  stats_.busy_s[rank] += engine_.now() - stream.started_s;
  if (observer_)
    for (int replica = 0; replica < replicas_; ++replica)
      observer_->on_phase(PhaseRecord{replica * static_cast<int>(ranks_.size()) + rank,
                                      stream.gathering ? PhaseKind::kParameterGather : PhaseKind::kGradientReduce,
                                      stream.started_s, engine_.now(), done.bytes, done.op, group == 1});
  stream.running = -1;
  if (stream.gathering) {
    if (++state.gathers_done == sync.parameters.size()) rank_done_(rank);
  } else {
    ++state.gradients_done;
    maybe_step(rank);
  }
  launch_next(rank, group);
}

bool GradientSync::gradients_reduced(int rank) const {
  const RankState& state = state_[rank];
  return state.replicas_finished >= replicas_ && state.gradients_done >= state.gradients_expected;
}

bool GradientSync::rank_pairs_done(int rank) {
  bool all_done = true;
  for (const std::size_t p : pairs_of_rank_[rank]) {
    RankPairState& state = pair_state_[p];
    if (state.done) continue;
    all_done = false;
    // Both ranks join the pair's all-reduce once their own reductions are done.
    const RankPairAllReduce& pair = rank_pairs_[p];
    if (!state.launched && gradients_reduced(pair.ranks[0]) && gradients_reduced(pair.ranks[1])) {
      state.launched = true;
      state.started_s = engine_.now();
      launcher_.launch(state.slot, pair.rings, pair.collective);
    }
  }
  return all_done;
}

void GradientSync::rank_pair_done(std::size_t p) {
  RankPairState& state = pair_state_[p];
  state.done = true;
  stats_.rank_pair_s[p] = engine_.now() - state.started_s;
  const RankPairAllReduce& pair = rank_pairs_[p];
  for (const int rank : pair.ranks) {
    if (observer_)
      for (int replica = 0; replica < replicas_; ++replica)
        observer_->on_phase(PhaseRecord{replica * static_cast<int>(ranks_.size()) + rank, PhaseKind::kGradientReduce,
                                        state.started_s, engine_.now(), pair.collective.bytes,
                                        pair.collective.op, false});
    maybe_step(rank);
  }
}

void GradientSync::maybe_step(int rank) {
  RankState& state = state_[rank];
  if (state.optimizer_started || !gradients_reduced(rank)) return;
  if (!rank_pairs_done(rank)) return;
  if (state.ready_to_step) return;
  state.ready_to_step = true;
  // What the rank's own reductions left exposed; waiting for other ranks is not counted.
  stats_.exposed_s[rank] = engine_.now() - state.last_op_end_s;
  if (!optimizer_sync_.across_ranks) {
    step(rank);
    return;
  }
  if (++ranks_ready_ == ranks_.size())
    engine_.schedule(optimizer_sync_.seconds, handler_id_, kStepEveryRank, pack(0));
}

void GradientSync::step(int rank) {
  RankState& state = state_[rank];
  state.optimizer_started = true;
  const double end = step_optimizer_(rank);
  engine_.schedule(std::max(0.0, end - engine_.now()), handler_id_, kOptimizerDone, pack(rank));
}

void GradientSync::optimizer_done(int rank) {
  state_[rank].optimizer_done = true;
  if (ranks_[rank].parameters.empty()) {
    rank_done_(rank);
    return;
  }
  launch_next(rank, 0);
  launch_next(rank, 1);
}

bool GradientSync::finished() const {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankState& s = state_[r];
    if (!s.optimizer_done || s.reduce[0].running >= 0 || s.reduce[1].running >= 0 ||
        s.gathers_done < ranks_[r].parameters.size())
      return false;
  }
  return true;
}

}  // namespace hetsim

#include "sim/weight_gathers.hpp"

#include "base/error.hpp"

namespace hetsim {

WeightGathers::WeightGathers(Engine& engine, CollectiveLauncher& launcher, const std::vector<RankSync>& ranks,
                             std::vector<std::vector<GatheredOp>> ops, int replicas, ReplayObserver* observer,
                             std::function<void(int)> arrived)
    : engine_(engine),
      launcher_(launcher),
      ranks_(ranks),
      replicas_(replicas),
      observer_(observer),
      arrived_(std::move(arrived)),
      state_(ranks.size()),
      busy_s_(ranks.size(), 0) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    RankState& state = state_[r];
    state.ops = std::move(ops[r]);
    for (const GatheredOp& op : state.ops) {
      if (op.chunk < 0 || static_cast<std::size_t>(op.chunk) >= ranks_[r].chunk_gathers.size() ||
          ranks_[r].chunk_gathers[op.chunk].empty())
        throw SimulationError("a gathered op's chunk has no weights to gather");
      state.first_unit.push_back(state.units_total);
      state.units_total += ranks_[r].chunk_gathers[op.chunk].size();
    }
    state.replicas_started.assign(state.units_total, 0);
    const int rank = static_cast<int>(r);
    state.slot = launcher_.add_slot([this, rank] { collective_done(rank); });
    maybe_gather(rank);
  }
}

std::size_t WeightGathers::units(int rank, std::size_t j) const {
  return ranks_[rank].chunk_gathers[state_[rank].ops[j].chunk].size();
}

const GatherUnit& WeightGathers::unit(int rank, std::size_t j, std::size_t u) const {
  const GatheredOp& op = state_[rank].ops[j];
  const auto& units = ranks_[rank].chunk_gathers[op.chunk];
  return units[op.backward ? units.size() - 1 - u : u];
}

void WeightGathers::unit_started(int rank, std::size_t j, std::size_t u) {
  if (++state_[rank].replicas_started[state_[rank].first_unit[j] + u] == replicas_) maybe_gather(rank);
}

void WeightGathers::maybe_gather(int rank) {
  RankState& state = state_[rank];
  const std::size_t p = state.units_arrived;
  if (state.running || p >= state.units_total || (p > 0 && state.replicas_started[p - 1] < replicas_))
    return;
  while (state.op + 1 < state.first_unit.size() && state.first_unit[state.op + 1] <= p) ++state.op;
  state.running = true;
  state.collective = 0;
  state.started_s = engine_.now();
  const BucketCollective& first = unit(rank, state.op, p - state.first_unit[state.op]).collectives.front();
  launcher_.launch(state.slot, ranks_[rank].groups[first.group], first);
}

void WeightGathers::collective_done(int rank) {
  RankState& state = state_[rank];
  const GatherUnit& current = unit(rank, state.op, state.units_arrived - state.first_unit[state.op]);
  const BucketCollective& done = current.collectives[state.collective];
  busy_s_[rank] += engine_.now() - state.started_s;
  if (observer_)
    for (int replica = 0; replica < replicas_; ++replica)
      observer_->on_phase(PhaseRecord{replica * static_cast<int>(ranks_.size()) + rank, PhaseKind::kWeightGather,
                                      state.started_s, engine_.now(), done.bytes, done.op});
  if (++state.collective < current.collectives.size()) {
    const BucketCollective& next = current.collectives[state.collective];
    state.started_s = engine_.now();
    launcher_.launch(state.slot, ranks_[rank].groups[next.group], next);
    return;
  }
  state.running = false;
  ++state.units_arrived;
  maybe_gather(rank);
  arrived_(rank);
}

bool WeightGathers::finished() const {
  for (const RankState& s : state_)
    if (s.running || s.units_arrived < s.units_total) return false;
  return true;
}

}  // namespace hetsim

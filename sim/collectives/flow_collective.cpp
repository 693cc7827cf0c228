#include "sim/collectives/flow_collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "base/error.hpp"
#include "sim/cluster_links.hpp"

namespace hetsim {

namespace {

// Starts each transfer once its dependencies are met. Stored transfers keep a count of what they
// wait for and lists of who waits for them; a ring phase keeps three counters per ring position
// instead (RingPhase: a position's next step waits only for its predecessor's and its own
// previous step), so its transfers cost nothing until they start. Dependents are released in
// ascending id order, as a plan built transfer by transfer would release them.
class PlanRunner : public FlowListener {
 public:
  PlanRunner(const Cluster& cluster, const CollectivePlan& plan, NetworkOptions options)
      : cluster_(cluster),
        plan_(plan),
        stored_(plan.transfers.size()),
        network_(engine_, network_links(cluster), *this, options),
        waiting_(plan.transfers.size(), 0),
        after_delivery_(plan.transfers.size()),
        after_drain_(plan.transfers.size()) {
    for (std::size_t t = 0; t < stored_; ++t) {
      for (const TransferDependency& d : plan.transfers[t].after) {
        if (d.transfer >= stored_)
          throw SimulationError(fmt::format(
              "collective plan: transfer {} waits for transfer {} of {}", t, d.transfer, stored_));
        (d.drained_only ? after_drain_ : after_delivery_)[d.transfer].push_back(
            static_cast<int>(t));
        ++waiting_[t];
      }
    }
    std::uint64_t next_id = stored_;
    for (std::uint32_t p = 0; p < plan.ring_phases.size(); ++p) {
      const RingPhase& phase = plan.ring_phases[p];
      const std::size_t n = phase.rings.empty() ? 0 : phase.rings.front().size();
      if (phase.first_id != next_id || n < 2 || phase.steps < 1 ||
          phase.first_after.size() != phase.rings.size())
        throw SimulationError(
            fmt::format("collective plan: ring phase {} is malformed (first id {}, expected {})", p,
                        phase.first_id, next_id));
      next_id += phase.transfer_count();
      RingState state;
      state.positions = phase.rings.size() * n;
      state.started.assign(state.positions, 0);
      state.received.assign(state.positions, 0);
      state.drained.assign(state.positions, 0);
      state.first_waiting.assign(state.positions, 0);
      for (std::size_t r = 0; r < phase.rings.size(); ++r) {
        if (phase.rings[r].size() != n || phase.first_after[r].size() != n)
          throw SimulationError(
              fmt::format("collective plan: ring {} of phase {} has {} GPUs; expected {}", r, p,
                          phase.rings[r].size(), n));
        for (std::size_t i = 0; i < n; ++i) {
          for (const TransferDependency& d : phase.first_after[r][i]) {
            if (d.transfer >= phase.first_id)
              throw SimulationError(fmt::format(
                  "collective plan: ring phase {} waits for transfer {}, not of an earlier phase",
                  p, d.transfer));
            (d.drained_only ? first_after_drain_ : first_after_delivery_)[d.transfer].push_back(
                {p, static_cast<std::uint32_t>(r * n + i)});
            ++state.first_waiting[r * n + i];
          }
        }
      }
      rings_.push_back(std::move(state));
    }
  }

  CollectiveTiming run() {
    for (std::size_t t = 0; t < stored_; ++t)
      if (waiting_[t] == 0) start_stored(static_cast<int>(t));
    for (std::uint32_t p = 0; p < rings_.size(); ++p)
      for (std::size_t position = 0; position < rings_[p].positions; ++position)
        try_start(p, position);
    engine_.run();
    const std::uint64_t total = plan_.transfer_count();
    if (delivered_ != total)
      throw SimulationError(fmt::format(
          "collective plan: {} of {} transfers never started (their dependencies form a cycle)",
          total - delivered_, total));
    CollectiveTiming timing;
    timing.time_s = finished_at_;
    timing.transfers = total;
    timing.events = engine_.events_processed();
    timing.link_bytes = network_.link_bytes();
    return timing;
  }

  void on_flow_delivered(std::uint64_t token) override {
    ++delivered_;
    finished_at_ = std::max(finished_at_, engine_.now());
    if (token < stored_) {
      release(after_delivery_[token]);
    } else {
      const RingTransfer t = locate(token);
      const RingPhase& phase = plan_.ring_phases[t.phase];
      // The successor's next step had this transfer's data to wait for.
      if (t.step + 1 < phase.steps) {
        const std::size_t n = phase.rings.front().size();
        const std::size_t successor = t.ring * n + (t.position + 1) % n;
        ++rings_[t.phase].received[successor];
        try_start(t.phase, successor);
      }
    }
    release_later_phases(first_after_delivery_, token);
  }

  void on_flow_drained(std::uint64_t token) override {
    if (token < stored_) {
      release(after_drain_[token]);
    } else {
      const RingTransfer t = locate(token);
      if (t.step + 1 < plan_.ring_phases[t.phase].steps) {
        const std::size_t position =
            t.ring * plan_.ring_phases[t.phase].rings.front().size() + t.position;
        ++rings_[t.phase].drained[position];
        try_start(t.phase, position);
      }
    }
    release_later_phases(first_after_drain_, token);
  }

 private:
  // Per ring position (ring * n + index in the ring): the next step to start, and how many of its
  // predecessor's transfers have arrived and of its own have drained.
  struct RingState {
    std::size_t positions = 0;
    std::vector<int> started;
    std::vector<int> received;
    std::vector<int> drained;
    std::vector<int> first_waiting;  // step 0's dependencies on earlier phases not yet met
  };
  struct PhaseWaiter {  // a ring phase's first step at one position
    std::uint32_t phase;
    std::uint32_t position;
  };
  struct RingTransfer {
    std::uint32_t phase;
    std::size_t ring;
    int step;
    std::size_t position;
  };

  RingTransfer locate(std::uint64_t id) const {
    std::uint32_t p = static_cast<std::uint32_t>(plan_.ring_phases.size()) - 1;
    while (plan_.ring_phases[p].first_id > id) --p;
    const RingPhase& phase = plan_.ring_phases[p];
    const std::uint64_t n = phase.rings.front().size();
    const std::uint64_t local = id - phase.first_id;
    const std::uint64_t ring_step = local / n;
    return {p, static_cast<std::size_t>(ring_step / static_cast<std::uint64_t>(phase.steps)),
            static_cast<int>(ring_step % static_cast<std::uint64_t>(phase.steps)),
            static_cast<std::size_t>(local % n)};
  }

  // Starts the position's next step if it may go: at most one, as the step after it waits for
  // this one to drain.
  void try_start(std::uint32_t p, std::size_t position) {
    RingState& state = rings_[p];
    const RingPhase& phase = plan_.ring_phases[p];
    const int step = state.started[position];
    if (step >= phase.steps || state.first_waiting[position] > 0 ||
        state.received[position] < step || state.drained[position] < step)
      return;
    ++state.started[position];
    const std::size_t n = phase.rings.front().size();
    const std::vector<GpuId>& ring = phase.rings[position / n];
    const std::size_t i = position % n;
    const std::uint64_t id = phase.first_id +
                             ((position / n) * static_cast<std::uint64_t>(phase.steps) +
                              static_cast<std::uint64_t>(step)) *
                                 n +
                             i;
    // A transfer with nothing to drain has left at once: its drain dependents start now.
    const std::span<const LinkId> route = cluster_.route(ring[i], ring[(i + 1) % n]);
    if (!network_.start_flow(route, phase.bytes, id, 0, network_.window_rate_cap(route)))
      on_flow_drained(id);
  }

  void start_stored(int t) {
    const Transfer& transfer = plan_.transfers[t];
    const std::span<const LinkId> route = cluster_.route(transfer.src, transfer.dst);
    if (!network_.start_flow(route, transfer.bytes, static_cast<std::uint64_t>(t), 0,
                             network_.window_rate_cap(route)))
      on_flow_drained(static_cast<std::uint64_t>(t));
  }
  void release(const std::vector<int>& dependents) {
    for (int d : dependents)
      if (--waiting_[d] == 0) start_stored(d);
  }
  void release_later_phases(
      const std::unordered_map<std::uint64_t, std::vector<PhaseWaiter>>& waiters,
      std::uint64_t token) {
    if (waiters.empty()) return;
    const auto it = waiters.find(token);
    if (it == waiters.end()) return;
    for (const PhaseWaiter& w : it->second)
      if (--rings_[w.phase].first_waiting[w.position] == 0) try_start(w.phase, w.position);
  }

  const Cluster& cluster_;
  const CollectivePlan& plan_;
  const std::uint64_t stored_;
  Engine engine_;
  Network network_;
  std::vector<int> waiting_;
  std::vector<std::vector<int>> after_delivery_;
  std::vector<std::vector<int>> after_drain_;
  std::vector<RingState> rings_;  // by ring phase
  // Earlier phases' transfers that a ring phase's first step waits for, in ascending waiter id.
  std::unordered_map<std::uint64_t, std::vector<PhaseWaiter>> first_after_delivery_;
  std::unordered_map<std::uint64_t, std::vector<PhaseWaiter>> first_after_drain_;
  std::uint64_t delivered_ = 0;
  double finished_at_ = 0;
};

}  // namespace

CollectiveTiming simulate_collective_flows(const Cluster& cluster, const CollectivePlan& plan,
                                           NetworkOptions options) {
  PlanRunner runner(cluster, plan, options);
  return runner.run();
}

}  // namespace hetsim

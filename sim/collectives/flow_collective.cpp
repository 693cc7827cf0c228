#include "sim/collectives/flow_collective.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.hpp"
#include "sim/cluster_links.hpp"

namespace hetsim {

namespace {

class PlanRunner : public FlowListener {
 public:
  PlanRunner(const Cluster& cluster, const CollectivePlan& plan, NetworkOptions options)
      : cluster_(cluster),
        plan_(plan),
        network_(engine_, network_links(cluster), *this, options),
        waiting_(plan.transfers.size(), 0),
        after_delivery_(plan.transfers.size()),
        after_drain_(plan.transfers.size()) {
    for (std::size_t t = 0; t < plan.transfers.size(); ++t) {
      for (const TransferDependency& d : plan.transfers[t].after) {
        if (d.transfer < 0 || static_cast<std::size_t>(d.transfer) >= plan.transfers.size())
          throw SimulationError(fmt::format("collective plan: transfer {} waits for transfer {} of {}",
                                            t, d.transfer, plan.transfers.size()));
        (d.drained_only ? after_drain_ : after_delivery_)[d.transfer].push_back(static_cast<int>(t));
        ++waiting_[t];
      }
    }
  }

  CollectiveTiming run() {
    for (std::size_t t = 0; t < plan_.transfers.size(); ++t)
      if (waiting_[t] == 0) start(static_cast<int>(t));
    engine_.run();
    if (delivered_ != plan_.transfers.size())
      throw SimulationError(fmt::format(
          "collective plan: {} of {} transfers never started (their dependencies form a cycle)",
          plan_.transfers.size() - delivered_, plan_.transfers.size()));
    CollectiveTiming timing;
    timing.time_s = finished_at_;
    timing.transfers = plan_.transfers.size();
    timing.events = engine_.events_processed();
    timing.link_bytes = network_.link_bytes();
    return timing;
  }

  void on_flow_delivered(std::uint64_t token) override {
    ++delivered_;
    finished_at_ = std::max(finished_at_, engine_.now());
    release(after_delivery_[token]);
  }
  void on_flow_drained(std::uint64_t token) override { release(after_drain_[token]); }

 private:
  void start(int t) {
    const Transfer& transfer = plan_.transfers[t];
    // A transfer with nothing to drain has left at once: its drain dependents start now.
    if (!network_.start_flow(cluster_.route(transfer.src, transfer.dst), transfer.bytes,
                             static_cast<std::uint64_t>(t)))
      release(after_drain_[t]);
  }
  void release(const std::vector<int>& dependents) {
    for (int d : dependents)
      if (--waiting_[d] == 0) start(d);
  }

  const Cluster& cluster_;
  const CollectivePlan& plan_;
  Engine engine_;
  Network network_;
  std::vector<int> waiting_;
  std::vector<std::vector<int>> after_delivery_;
  std::vector<std::vector<int>> after_drain_;
  std::size_t delivered_ = 0;
  double finished_at_ = 0;
};

}  // namespace

CollectiveTiming simulate_collective_flows(const Cluster& cluster, const CollectivePlan& plan,
                                           NetworkOptions options) {
  PlanRunner runner(cluster, plan, options);
  return runner.run();
}

}  // namespace hetsim

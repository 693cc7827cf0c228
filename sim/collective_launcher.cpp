#include "sim/collective_launcher.hpp"

#include "base/error.hpp"
#include "sim/ring_collective.hpp"

namespace hetsim {

CollectiveLauncher::CollectiveLauncher(Engine& engine, Network* network)
    : engine_(engine), handler_id_(engine.add_handler(*this)), network_(network) {}

std::uint32_t CollectiveLauncher::add_slot(std::function<void()> done) {
  done_.push_back(std::move(done));
  flows_pending_.push_back(0);
  return static_cast<std::uint32_t>(done_.size() - 1);
}

void CollectiveLauncher::launch(std::uint32_t slot, const std::vector<RingHops>& rings,
                                const BucketCollective& collective) {
  int& pending = flows_pending_[slot];
  if (pending != 0) throw SimulationError("a collective stream launched while its collective runs");
  for (const RingHops& ring : rings) {
    const RingLoad load = ring_load(collective.op, static_cast<int>(ring.size()), collective.bytes);
    for (const RingHop& hop : ring) {
      if (network_ == nullptr) {
        for (int link : hop.route) {
          if (alpha_beta_link_bytes_.size() <= static_cast<std::size_t>(link))
            alpha_beta_link_bytes_.resize(link + 1, 0);
          alpha_beta_link_bytes_[link] += load.hop_bytes * hop.wire_share;
        }
        continue;
      }
      ++pending;
      ++flows_;
      // The network adds the route's latency once; the other steps' latencies come on top.
      network_->start_flow(hop.route, load.hop_bytes * hop.wire_share, kTokenBit | slot,
                           (load.steps - 1) * hop.latency_s,
                           network_->window_rate_cap(hop.route));
    }
  }
  if (pending == 0) engine_.schedule(network_ == nullptr ? collective.alpha_beta_s : 0, handler_id_, 0, slot);
}

void CollectiveLauncher::on_flow_delivered(std::uint64_t token) {
  const auto slot = static_cast<std::uint32_t>(token & ~kTokenBit);
  if (--flows_pending_[slot] == 0) done_[slot]();
}

void CollectiveLauncher::handle(const Event& event) { done_[static_cast<std::uint32_t>(event.payload)](); }

}  // namespace hetsim

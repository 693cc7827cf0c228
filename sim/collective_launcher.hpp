#pragma once
// Runs a data-parallel collective, a BucketCollective over the rings of one of a rank's groups,
// either as flows on the shared network or, without a network, as its alpha-beta time.
// As flows: one per ring hop, each carrying the hop's whole share of a pipelined ring in steady
// state (all-reduce: 2(n-1)/n * S, delivered after its drain plus 2(n-1) hop latencies;
// reduce-scatter and all-gather: (n-1)/n * S and n-1 latencies), so it contends max-min fairly
// with pipeline traffic and other rings. On a uniform ring the two paths agree exactly with
// 2(n-1)/n * S/B + 2(n-1) L (tests/sim/gradient_sync_test.cpp).
// Each stream of collectives (one collective at a time) registers a slot with what to call when
// its collective is done.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/rank_sync.hpp"

namespace hetsim {

class CollectiveLauncher : public EventHandler {
 public:
  // Flow tokens of this class carry this bit, so the network's one listener can dispatch.
  static constexpr std::uint64_t kTokenBit = std::uint64_t{1} << 63;

  // `network` null: every collective takes its alpha_beta_s. A ring hop is a connection: its
  // flow runs at most at the network's window rate over its route (Network::window_rate_cap).
  CollectiveLauncher(Engine& engine, Network* network);

  // A stream's slot; `done` is called when the collective launched on it completes.
  std::uint32_t add_slot(std::function<void()> done);
  // Starts `collective` over `rings` on `slot`, whose previous collective must be done.
  void launch(std::uint32_t slot, const std::vector<RingHops>& rings, const BucketCollective& collective);
  void on_flow_delivered(std::uint64_t token);
  void handle(const Event& event) override;

  std::uint64_t flows() const { return flows_; }
  // [link] bytes the alpha-beta path's collectives would have put on it (flows are counted by
  // the network); sized up to the highest link used.
  const std::vector<double>& alpha_beta_link_bytes() const { return alpha_beta_link_bytes_; }

 private:
  Engine& engine_;
  std::uint32_t handler_id_;
  Network* network_;
  std::vector<std::function<void()>> done_;  // [slot]
  std::vector<int> flows_pending_;           // [slot]
  std::uint64_t flows_ = 0;
  std::vector<double> alpha_beta_link_bytes_;
};

}  // namespace hetsim

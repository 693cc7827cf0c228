#pragma once
// Serving's transfers between GPUs (disaggregated serving's KV caches, a re-split's moved layers)
// as flows on the cluster's links, sharing them max-min fairly with every other transfer in
// flight (sim/network.hpp, the network the training replay uses): a transfer is one flow per
// GPU pair along its cluster route, and it is done when the last byte of its last flow has
// arrived. Alone on its route, a flow of S bytes arrives L + S/B after it starts (L: the route's
// latency, B: its smallest bandwidth), the alpha-beta closed form; flows crossing one link split
// its bandwidth, so many KV caches sent over one NIC or WAN link at once slow each other.
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::serving {

// Told when a transfer has fully arrived (never from inside RouteTransfers::start).
class TransferListener {
 public:
  virtual ~TransferListener() = default;
  virtual void on_transfer_done(std::uint64_t tag) = 0;
};

// One GPU pair's share of a transfer.
struct TransferPiece {
  GpuId src = 0;
  GpuId dst = 0;
  double bytes = 0;
};

class RouteTransfers : private FlowListener {
 public:
  // Registers a flow network on `engine` over the links of `cluster` (bandwidth traces included).
  RouteTransfers(Engine& engine, const Cluster& cluster, TransferListener& listener);

  // Starts every piece now; `tag` comes back in on_transfer_done once all have arrived.
  // `pieces` must not be empty.
  void start(std::uint64_t tag, const std::vector<TransferPiece>& pieces);

 private:
  struct Pending {
    std::uint64_t tag = 0;
    int flows_left = 0;
  };
  void on_flow_delivered(std::uint64_t token) override;

  const Cluster& cluster_;
  TransferListener& listener_;
  Network network_;
  std::vector<Pending> pending_;  // by slot; a slot is reused once its transfer is done
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace hetsim::serving

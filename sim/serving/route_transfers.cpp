#include "sim/serving/route_transfers.hpp"

#include "base/error.hpp"
#include "sim/cluster_links.hpp"

namespace hetsim::serving {

RouteTransfers::RouteTransfers(Engine& engine, const Cluster& cluster, TransferListener& listener)
    : cluster_(cluster), listener_(listener), network_(engine, network_links(cluster), *this) {}

void RouteTransfers::start(std::uint64_t tag, const std::vector<TransferPiece>& pieces) {
  if (pieces.empty()) throw SimulationError("serve: a transfer with nothing to send");
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(pending_.size());
    pending_.emplace_back();
  }
  pending_[slot] = {tag, static_cast<int>(pieces.size())};
  for (const TransferPiece& piece : pieces)
    network_.start_flow(cluster_.route(piece.src, piece.dst), piece.bytes, slot);
}

void RouteTransfers::on_flow_delivered(std::uint64_t token) {
  const auto slot = static_cast<std::uint32_t>(token);
  if (--pending_[slot].flows_left > 0) return;
  free_slots_.push_back(slot);
  listener_.on_transfer_done(pending_[slot].tag);
}

}  // namespace hetsim::serving

#pragma once
// Flows over routes of directed links. Every link shares its bandwidth equally among the flows
// crossing it, and a flow moves at the smallest share along its route; shares are recomputed
// when a flow starts or ends, for the flows on the links it touches only. A flow of S bytes on an
// otherwise idle route of bottleneck bandwidth B and total latency L is delivered L + S/B after it
// starts: the data drains at the shared rate, then the last byte travels the route's latency.
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"

namespace hetsim {

// Told when a flow's last byte arrives.
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_delivered(std::uint64_t token) = 0;
};

struct LinkCapacity {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

class Network : public EventHandler {
 public:
  Network(Engine& engine, std::vector<LinkCapacity> links, FlowListener& listener);

  // Starts a flow of `bytes` along `route` (link ids) now; `token` comes back in
  // on_flow_delivered. An empty route (same GPU) delivers after zero time.
  void start_flow(const std::vector<int>& route, double bytes, std::uint64_t token);

  std::size_t active_flows() const { return active_count_; }
  // Bytes that crossed each link so far (for per-link-class accounting).
  const std::vector<double>& link_bytes() const { return link_bytes_; }

  void handle(const Event& event) override;

 private:
  enum EventKind : std::uint32_t { kDrained = 0, kDelivered = 1 };
  struct Flow {
    std::vector<int> route;
    double remaining_bytes = 0;
    double rate = 0;          // bytes/s at the moment
    double updated_at = 0;    // when remaining_bytes was last brought up to date
    double latency_s = 0;
    std::uint64_t token = 0;
    std::uint32_t generation = 0;  // bumps on every reschedule; stale events are ignored
    bool active = false;
  };

  void settle(Flow& flow);                 // brings remaining_bytes up to now()
  void reschedule_flows_on(const std::vector<int>& route);
  void reschedule(std::uint32_t index);
  void finish_draining(std::uint32_t index);

  Engine& engine_;
  std::uint32_t handler_id_;
  FlowListener& listener_;
  std::vector<LinkCapacity> links_;
  std::vector<std::vector<std::uint32_t>> flows_on_link_;
  std::vector<double> link_bytes_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> touched_;     // scratch: flows whose share may have changed
  std::vector<std::uint32_t> touched_mark_;  // generation-stamped marks to de-duplicate touched_
  std::uint32_t mark_epoch_ = 0;
  std::size_t active_count_ = 0;
};

}  // namespace hetsim

#include "sim/network.hpp"

#include <algorithm>
#include <limits>

#include "base/error.hpp"

namespace hetsim {

Network::Network(Engine& engine, std::vector<LinkCapacity> links, FlowListener& listener)
    : engine_(engine),
      handler_id_(engine.add_handler(*this)),
      listener_(listener),
      links_(std::move(links)),
      flows_on_link_(links_.size()),
      link_bytes_(links_.size(), 0.0) {}

void Network::start_flow(const std::vector<int>& route, double bytes, std::uint64_t token) {
  std::uint32_t index;
  if (!free_slots_.empty()) {
    index = free_slots_.back();
    free_slots_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
    touched_mark_.push_back(0);
  }
  Flow& flow = flows_[index];
  flow.route = route;
  flow.remaining_bytes = bytes;
  flow.rate = 0;
  flow.updated_at = engine_.now();
  flow.token = token;
  flow.active = true;
  flow.latency_s = 0;
  for (int link : route) {
    flow.latency_s += links_[link].latency_s;
    link_bytes_[link] += bytes;
  }
  ++active_count_;
  if (route.empty() || bytes <= 0) {
    // Nothing to drain: only the route's latency remains.
    finish_draining(index);
    return;
  }
  for (int link : route) flows_on_link_[link].push_back(index);
  reschedule_flows_on(flows_[index].route);
}

void Network::settle(Flow& flow) {
  const double now = engine_.now();
  flow.remaining_bytes = std::max(0.0, flow.remaining_bytes - flow.rate * (now - flow.updated_at));
  flow.updated_at = now;
}

void Network::reschedule_flows_on(const std::vector<int>& route) {
  // Every flow sharing a link with `route` may see its share change; collect each once.
  ++mark_epoch_;
  touched_.clear();
  for (int link : route) {
    for (std::uint32_t other : flows_on_link_[link]) {
      if (touched_mark_[other] == mark_epoch_) continue;
      touched_mark_[other] = mark_epoch_;
      touched_.push_back(other);
    }
  }
  for (std::uint32_t index : touched_) settle(flows_[index]);
  for (std::uint32_t index : touched_) reschedule(index);
}

void Network::reschedule(std::uint32_t index) {
  Flow& flow = flows_[index];
  double rate = std::numeric_limits<double>::infinity();
  for (int link : flow.route) {
    const double share =
        links_[link].bandwidth_bytes_per_s / static_cast<double>(flows_on_link_[link].size());
    rate = std::min(rate, share);
  }
  flow.rate = rate;
  ++flow.generation;
  const std::uint64_t payload = (static_cast<std::uint64_t>(flow.generation) << 32) | index;
  engine_.schedule(flow.remaining_bytes / rate, handler_id_, kDrained, payload);
}

void Network::finish_draining(std::uint32_t index) {
  Flow& flow = flows_[index];
  ++flow.generation;
  const std::uint64_t payload = (static_cast<std::uint64_t>(flow.generation) << 32) | index;
  engine_.schedule(flow.latency_s, handler_id_, kDelivered, payload);
}

void Network::handle(const Event& event) {
  const auto index = static_cast<std::uint32_t>(event.payload & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>(event.payload >> 32);
  Flow& flow = flows_[index];
  if (!flow.active || flow.generation != generation) return;  // superseded by a reschedule
  if (event.kind == kDrained) {
    flow.remaining_bytes = 0;
    for (int link : flow.route) {
      auto& on_link = flows_on_link_[link];
      const auto it = std::find(on_link.begin(), on_link.end(), index);
      *it = on_link.back();
      on_link.pop_back();
    }
    finish_draining(index);
    reschedule_flows_on(flow.route);
    return;
  }
  flow.active = false;
  --active_count_;
  const std::uint64_t token = flow.token;
  free_slots_.push_back(index);
  listener_.on_flow_delivered(token);
}

}  // namespace hetsim

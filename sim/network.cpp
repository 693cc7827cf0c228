#include "sim/network.hpp"

#include <algorithm>

#include "base/error.hpp"

namespace hetsim {

namespace {
// Min-heap order of fair shares; the link id breaks ties so the filling order never depends on
// the heap's internal layout.
bool larger_share(double a_share, int a_link, double b_share, int b_link) {
  if (a_share != b_share) return a_share > b_share;
  return a_link > b_link;
}
}  // namespace

Network::Network(Engine& engine, const std::vector<LinkCapacity>& links, FlowListener& listener,
                 NetworkOptions options)
    : engine_(engine),
      handler_id_(engine.add_handler(*this)),
      listener_(listener),
      options_(options),
      links_(links.size()), latency_s_(links.size()), round_trip_s_(links.size()),
      fill_(links.size()),
      next_step_(links.size()), link_mark_(links.size()) {
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (!(links[l].bandwidth_bytes_per_s > 0))
      throw Error("network: link " + std::to_string(l) + " has no bandwidth");
    for (const BandwidthPoint& step : links[l].bandwidth_steps)
      if (!(step.bytes_per_s > 0))
        throw Error("network: a bandwidth step of link " + std::to_string(l) + " is not positive");
    links_[l].capacity = links[l].bandwidth_bytes_per_s;
    latency_s_[l] = links[l].latency_s;
    round_trip_s_[l] = links[l].round_trip_s;
    if (links[l].bandwidth_steps.empty()) continue;
    links_[l].has_steps = true;
    next_step_[l] = static_cast<std::uint32_t>(steps_.size());
    steps_.insert(steps_.end(), links[l].bandwidth_steps.begin(), links[l].bandwidth_steps.end());
    steps_.push_back(kEndOfSteps);
  }
}

std::vector<double> Network::link_bytes() const {
  std::vector<double> bytes(links_.size());
  for (std::size_t l = 0; l < links_.size(); ++l) bytes[l] = links_[l].bytes;
  return bytes;
}

std::span<const std::uint32_t> Network::flows_on(int link) const {
  const Link& state = links_[link];
  if (state.flow_count <= kInlineFlows) return {state.inline_flows, state.flow_count};
  return overflow_lists_[state.inline_flows[0]];
}

void Network::add_flow(int link, std::uint32_t flow) {
  Link& state = links_[link];
  if (state.flow_count < kInlineFlows) {
    state.inline_flows[state.flow_count++] = flow;
    return;
  }
  if (state.flow_count == kInlineFlows) {
    std::uint32_t list;
    if (free_overflow_lists_.empty()) {
      list = static_cast<std::uint32_t>(overflow_lists_.size());
      overflow_lists_.emplace_back();
    } else {
      list = free_overflow_lists_.back();
      free_overflow_lists_.pop_back();
    }
    overflow_lists_[list].assign(state.inline_flows, state.inline_flows + kInlineFlows);
    state.inline_flows[0] = list;
  }
  overflow_lists_[state.inline_flows[0]].push_back(flow);
  ++state.flow_count;
}

void Network::remove_flow(int link, std::uint32_t flow) {
  Link& state = links_[link];
  if (state.flow_count <= kInlineFlows) {
    std::uint32_t* const end = state.inline_flows + state.flow_count;
    *std::find(state.inline_flows, end, flow) = *(end - 1);
    --state.flow_count;
    return;
  }
  const std::uint32_t list = state.inline_flows[0];
  std::vector<std::uint32_t>& overflow = overflow_lists_[list];
  *std::find(overflow.begin(), overflow.end(), flow) = overflow.back();
  overflow.pop_back();
  if (--state.flow_count == kInlineFlows) {
    std::copy(overflow.begin(), overflow.end(), state.inline_flows);
    overflow.clear();
    free_overflow_lists_.push_back(list);
  }
}

std::uint32_t Network::next_generation(Flow& flow) { return ++flow.generation; }

bool Network::start_flow(std::span<const int> route, double bytes, std::uint64_t token,
                         double extra_delay_s, double rate_cap) {
  return start_flow_after(route,
                          plus_latencies(options_.per_message_overhead_s + extra_delay_s, route),
                          bytes, token, rate_cap);
}

bool Network::start_flow_after(std::span<const int> route, double delay_s, double bytes,
                               std::uint64_t token, double rate_cap) {
  if (!(rate_cap > 0)) throw Error("network: a flow's rate cap must be positive");
  const std::uint32_t index = take_slot();
  Flow& flow = flows_[index];
  flow.route = route.data();
  flow.route_length = static_cast<std::uint32_t>(route.size());
  return start(index, bytes, token, delay_s, rate_cap);
}

std::uint32_t Network::take_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    return index;
  }
  flows_.emplace_back();
  flow_mark_.push_back(0);
  frozen_mark_.push_back(0);
  old_rate_.push_back(0);
  return static_cast<std::uint32_t>(flows_.size() - 1);
}

bool Network::start(std::uint32_t index, double bytes, std::uint64_t token, double delay_s,
                    double rate_cap) {
  Flow& flow = flows_[index];
  const std::span<const int> route = route_of(flow);
  flow.remaining_bytes = bytes;
  flow.rate = 0;
  flow.updated_at = engine_.now();
  flow.token = token;
  flow.delay_s = delay_s;
  flow.rate_cap = rate_cap;
  for (int link : route) links_[link].bytes += bytes;
  ++active_count_;
  if (route.empty() || bytes <= 0) {
    // Nothing to drain: only the route's latency (and the overhead) remains.
    finish_draining(index);
    return false;
  }
  for (int link : route) {
    track_bandwidth_steps(link);
    add_flow(link, index);
  }
  recompute(route);
  return true;
}

void Network::settle(Flow& flow) {
  const double now = engine_.now();
  flow.remaining_bytes = std::max(0.0, flow.remaining_bytes - flow.rate * (now - flow.updated_at));
  flow.updated_at = now;
}

void Network::collect_component(std::span<const int> seed_links) {
  ++epoch_;
  component_.clear();
  component_links_.clear();
  // component_links_ doubles as the work list: links are appended when first reached and
  // scanned in order, so the walk is breadth-first and needs no second container.
  const auto reach = [this](int link) {
    if (link_mark_[link] == epoch_) return;
    link_mark_[link] = epoch_;
    component_links_.push_back(link);
  };
  if (options_.incremental) {
    for (int link : seed_links) reach(link);
  } else {
    for (std::size_t l = 0; l < links_.size(); ++l)
      if (links_[l].flow_count != 0) reach(static_cast<int>(l));
  }
  for (std::size_t next = 0; next < component_links_.size(); ++next) {
    for (std::uint32_t f : flows_on(component_links_[next])) {
      if (flow_mark_[f] == epoch_) continue;
      flow_mark_[f] = epoch_;
      component_.push_back(f);
      for (int link : route_of(flows_[f])) reach(link);
    }
  }
}

bool Network::recompute_lone_flow(std::span<const int> seed_links) {
  // The change's component is one flow when every seed link carries no flow or that flow, and
  // each link of its route carries it alone (once: a route that crosses a link twice puts two
  // entries there). Progressive filling would then give every link the share capacity / 1 and
  // the flow the smallest: exactly the smallest capacity on its route.
  std::uint32_t lone = 0;
  bool found = false;
  for (int link : seed_links) {
    const Link& state = links_[link];
    if (state.flow_count == 0) continue;
    if (state.flow_count > 1 || (found && state.inline_flows[0] != lone)) return false;
    lone = state.inline_flows[0];
    found = true;
  }
  if (!found) {  // nothing crosses the change: no rate to update
    ++recomputations_;
    ++lone_flow_recomputations_;
    return true;
  }
  Flow& flow = flows_[lone];
  const std::span<const int> route = route_of(flow);
  double rate = std::min(flow.rate_cap, links_[route[0]].capacity);
  for (int link : route) {
    if (links_[link].flow_count != 1) return false;
    rate = std::min(rate, links_[link].capacity);
  }
  ++recomputations_;
  ++lone_flow_recomputations_;
  ++flows_recomputed_;
  settle(flow);
  const double old_rate = flow.rate;
  flow.rate = rate;
  if (rate != old_rate) schedule_drain(lone);
  return true;
}

void Network::recompute(std::span<const int> seed_links) {
  if (options_.incremental && options_.lone_flow_shortcut && recompute_lone_flow(seed_links))
    return;
  collect_component(seed_links);
  ++recomputations_;
  flows_recomputed_ += component_.size();
  for (std::uint32_t f : component_) {
    settle(flows_[f]);
    old_rate_[f] = flows_[f].rate;
  }
  progressive_filling();
  // A flow whose rate is unchanged keeps its pending drain event: its remaining bytes were
  // settled at that same rate, so the event's time is still right.
  for (std::uint32_t f : component_)
    if (flows_[f].rate != old_rate_[f]) schedule_drain(f);
}

template <typename Push>
void Network::freeze(std::uint32_t f, double share, int skip_link, Push&& push) {
  frozen_mark_[f] = epoch_;
  flows_[f].rate = share;
  for (int link : route_of(flows_[f])) {
    LinkFill& state = fill_[link];
    state.left = std::max(0.0, state.left - share);
    --state.unfrozen;
    if (link == skip_link || state.unfrozen == 0) continue;
    push(state.left / state.unfrozen, link, ++state.version);
  }
}

void Network::progressive_filling() {
  heap_.clear();
  const auto heap_order = [](const Share& a, const Share& b) {
    return larger_share(a.share, a.link, b.share, b.link);
  };
  for (int link : component_links_) {
    LinkFill& state = fill_[link];
    state.left = links_[link].capacity;
    state.unfrozen = links_[link].flow_count;
    ++state.version;
    if (state.unfrozen == 0) continue;
    heap_.push_back({state.left / state.unfrozen, link, state.version});
  }
  // A capped flow enters as one more constraint, its cap, frozen at it if no link's share
  // comes first: max-min fairness with a flow's cap as a link of its own.
  for (std::uint32_t f : component_)
    if (flows_[f].rate_cap != kUncapped) heap_.push_back({flows_[f].rate_cap, cap_entry(f), 0});
  std::make_heap(heap_.begin(), heap_.end(), heap_order);
  const std::uint32_t frozen_epoch = epoch_;
  const auto push = [&](double share, int link, std::uint32_t version) {
    heap_.push_back({share, link, version});
    std::push_heap(heap_.begin(), heap_.end(), heap_order);
  };
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), heap_order);
    const Share top = heap_.back();
    heap_.pop_back();
    if (top.link < 0) {
      const std::uint32_t f = capped_flow(top.link);
      if (frozen_mark_[f] != frozen_epoch) freeze(f, top.share, top.link, push);
      continue;
    }
    if (top.version != fill_[top.link].version || fill_[top.link].unfrozen == 0) continue;
    // The smallest fair share in the component: every unfrozen flow on this link gets it. Taking
    // it off the other links only raises their shares ((c - s)/(n - 1) >= c/n when s <= c/n), so
    // stale heap entries are always smaller than the live ones and can be skipped.
    for (std::uint32_t f : flows_on(top.link))
      if (frozen_mark_[f] != frozen_epoch) freeze(f, top.share, top.link, push);
  }
}

void Network::schedule_drain(std::uint32_t index) {
  Flow& flow = flows_[index];
  const std::uint64_t payload = (static_cast<std::uint64_t>(next_generation(flow)) << 32) | index;
  engine_.schedule(flow.remaining_bytes / flow.rate, handler_id_, kDrained, payload);
}

void Network::finish_draining(std::uint32_t index) {
  Flow& flow = flows_[index];
  engine_.schedule(flow.delay_s, handler_id_, kDelivered, flow.token);
  next_generation(flow);  // a drain event still queued for this flow is stale now
  free_slots_.push_back(index);
}

void Network::track_bandwidth_steps(int link) {
  Link& state = links_[link];
  if (!state.has_steps || state.step_pending) return;
  // The link was idle with no step event queued: catch its bandwidth up with the clock.
  const double now = engine_.now();
  std::uint32_t& next_step = next_step_[link];
  while (steps_[next_step].time_s <= now) state.capacity = steps_[next_step++].bytes_per_s;
  if (!(steps_[next_step].bytes_per_s > 0)) return;  // kEndOfSteps: no change left
  state.step_pending = true;
  engine_.schedule(std::max(0.0, steps_[next_step].time_s - now), handler_id_, kBandwidthStep,
                   static_cast<std::uint64_t>(link));
}

void Network::prefetch(const Event& event, Lookahead stage) const {
  if (event.kind != kDrained) return;
  const auto index = static_cast<std::uint32_t>(event.payload & 0xffffffffu);
  const Flow& flow = flows_[index];
  if (stage == Lookahead::kFar) {
    __builtin_prefetch(&flow);
    return;
  }
  prefetch_links(route_of(flow));
}

void Network::handle(const Event& event) {
  if (event.kind == kBandwidthStep) {
    const int link = static_cast<int>(event.payload);
    Link& state = links_[link];
    state.step_pending = false;
    state.capacity = steps_[next_step_[link]++].bytes_per_s;
    // Steps are only followed while flows cross the link, so an idle trace never keeps the
    // engine running; the next flow catches the bandwidth up (track_bandwidth_steps).
    if (state.flow_count == 0) return;
    const int changed[] = {link};
    recompute(changed);
    track_bandwidth_steps(link);
    return;
  }
  if (event.kind == kDelivered) {
    --active_count_;
    listener_.on_flow_delivered(event.payload);
    return;
  }
  const auto index = static_cast<std::uint32_t>(event.payload & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>(event.payload >> 32);
  Flow& flow = flows_[index];
  // Superseded by a reschedule, or the slot was freed since (finish_draining bumps the
  // generation, and a flow taking the slot schedules its drain with a newer one).
  if (flow.generation != generation) return;
  const std::span<const int> route = route_of(flow);
  const std::uint64_t token = flow.token;
  prefetch_links(route);
  for (int link : route) remove_flow(link, index);
  finish_draining(index);
  recompute(route);
  listener_.on_flow_drained(token);
}

}  // namespace hetsim

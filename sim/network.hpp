#pragma once
// Flows over routes of directed links, sharing bandwidth max-min fairly (progressive filling,
// Bertsekas & Gallager, "Data Networks", 2nd ed., section 6.5.2): the smallest fair share of any
// link fixes the rate of every flow crossing it, that rate is taken off the other links those
// flows cross, and the filling repeats on what is left. Rates are recomputed when a flow starts,
// finishes draining, or a link's bandwidth changes, for the connected component of flows that
// share links (transitively) with the change only; flows elsewhere keep their rates and events.
//
// A flow of S bytes on an otherwise idle route of bottleneck bandwidth B and total latency L is
// delivered L + S/B (+ the per-message overhead) after it starts: the data drains at the fair
// rate, then the last byte travels the route's latency.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "sim/engine.hpp"
#include "topologies/bandwidth_point.hpp"

namespace hetsim {

// Told when a flow's last byte arrives; optionally also when it has left the sender (drained:
// the route is free for the sender's next message while the last byte is still in flight).
// Neither is called from inside Network::start_flow.
class FlowListener {
 public:
  virtual ~FlowListener() = default;
  virtual void on_flow_delivered(std::uint64_t token) = 0;
  virtual void on_flow_drained(std::uint64_t /*token*/) {}
};

// A link as the network is built with it. The bandwidth steps are the caller's (a cluster's
// traces, which last as long as it does) and only read while the Network is constructed: with no
// vector of its own a LinkCapacity needs no destructor, and the 270,000 links of 65,536 GPUs are
// freed without walking them (BENCHMARKS.md, 2026-12-06, late).
struct LinkCapacity {
  double bandwidth_bytes_per_s = 0;  // before the first step, or always when there are none
  double latency_s = 0;
  std::span<const BandwidthPoint> bandwidth_steps = {};  // sorted by time_s; empty = constant
  // What the link adds to the round trip a windowed transport waits for (a receiver's credit
  // or a TCP acknowledgement): twice a wide-area or measured pair link's one-way delay; 0 where
  // `latency_s` is a collective library's small-message floor (NVLink, a NIC inside a site),
  // whose wire round trip of a few microseconds lets any transport window run at line rate.
  double round_trip_s = 0;
};

struct NetworkOptions {
  // Fixed cost added to every flow's delivery (a collective library's per-message software
  // path, say); 0 by default, so a flow costs its route's latency + drain time only.
  double per_message_overhead_s = 0;
  // false recomputes every active flow on each change: slower, for checking the incremental path.
  bool incremental = true;
  // false runs progressive filling even when the change leaves one flow alone on its links (whose
  // rate is then its route's smallest capacity, computed directly): for checking that shortcut.
  bool lone_flow_shortcut = true;
  // Bytes one connection keeps in flight where its route has a round trip (LinkCapacity::
  // round_trip_s): window_rate_cap's window. 0: unbounded.
  double connection_window_bytes = 0;
};

class Network : public EventHandler {
 public:
  Network(Engine& engine, const std::vector<LinkCapacity>& links, FlowListener& listener,
          NetworkOptions options = {});

  // Starts a flow of `bytes` along `route` (link ids) now; `token` comes back in
  // on_flow_delivered. An empty route (same GPU) delivers after the overhead only. `extra_delay_s`
  // is added to its delivery like latency (a pipelined collective's further hop latencies).
  // Returns whether the flow has bytes to drain: only then does on_flow_drained follow (from an
  // event, never from inside this call); a flow with nothing to drain has left the sender now.
  // The route is not copied: it must stay as it is until on_flow_delivered(token) has been
  // called (a cluster's routes and a replay's channels last the whole simulation).
  // `rate_cap` bounds the flow's rate whatever its fair share (window_rate_cap: a transport
  // with a bounded number of bytes in flight on a long round trip).
  bool start_flow(std::span<const int> route, double bytes, std::uint64_t token,
                  double extra_delay_s = 0, double rate_cap = kUncapped);
  // A temporary route would be gone before the flow reads it again.
  bool start_flow(std::vector<int>&& route, double bytes, std::uint64_t token,
                  double extra_delay_s = 0, double rate_cap = kUncapped) = delete;
  // What a flow on `route` with no extra delay waits from its last byte leaving to its delivery:
  // the per-message overhead plus the route's latencies, summed as start_flow sums them.
  double route_delay_s(std::span<const int> route) const {
    return plus_latencies(options_.per_message_overhead_s, route);
  }
  // start_flow with that wait given, for a caller that starts many flows on one route and keeps
  // its route_delay_s: the start then reads no latency, only the links' hot state.
  bool start_flow_after(std::span<const int> route, double delay_s, double bytes,
                        std::uint64_t token, double rate_cap = kUncapped);

  static constexpr double kUncapped = std::numeric_limits<double>::infinity();
  // The rate a connection holding at most NetworkOptions::connection_window_bytes in flight
  // reaches on `route`: a window per round trip (the fluid bound of a sliding window, Mathis et
  // al., CCR 1997: rate <= window / RTT), the round trip summed over the route's links'
  // round_trip_s. kUncapped when the window is 0 (unbounded) or the route adds no round trip.
  // The cap to pass to start_flow for a connection's message.
  double window_rate_cap(std::span<const int> route) const {
    double round_trip_s = 0;
    for (int link : route) round_trip_s += round_trip_s_[link];
    const double window = options_.connection_window_bytes;
    return window > 0 && round_trip_s > 0 ? window / round_trip_s : kUncapped;
  }

  // Starts fetching the state of these links into the CPU's caches, for flows about to start or
  // drain on them: a caller starting several flows at once (a transfer's tensor-parallel pairs)
  // lets their cache misses overlap instead of paying them one flow after another. Changes
  // nothing.
  void prefetch_links(std::span<const int> links) const {
    for (int link : links) __builtin_prefetch(&links_[link]);
  }

  std::size_t active_flows() const { return active_count_; }
  // Bytes that crossed each link so far, by link id (for per-link-class accounting).
  std::vector<double> link_bytes() const;
  // Rate recomputations done and flows they touched (the cost of the incremental path).
  std::uint64_t recomputations() const { return recomputations_; }
  std::uint64_t flows_recomputed() const { return flows_recomputed_; }
  // Of the recomputations, those that found one flow alone on its links (or none) and took the
  // shortcut.
  std::uint64_t lone_flow_recomputations() const { return lone_flow_recomputations_; }

  void handle(const Event& event) override;
  void prefetch(const Event& event, Lookahead stage) const override;

 private:
  // A kDrained event's payload is (generation << 32 | slot); a kDelivered event's is the flow's
  // token, so that a delivery reads no slot.
  enum EventKind : std::uint32_t { kDrained = 0, kDelivered = 1, kBandwidthStep = 2 };
  // A draining flow's slot: one cache line, which starting and draining it read and write. The
  // slot is free again once the flow has drained: what its delivery needs travels in the event,
  // so the slot a channel's next transfer takes when this one drains is the line just read, and
  // the flows in flight over a route's latency hold none (BENCHMARKS.md, 2026-12-06, later).
  // The route stays where the caller keeps it (start_flow): a replay's transfer starts one flow
  // per tensor-parallel GPU pair on routes stored end to end in its channel, so the routes of a
  // transfer's eight flows share one or two lines, where a copy in each slot made each slot 112
  // bytes (two or three lines) and 7 MiB at 65,536 GPUs.
  struct alignas(64) Flow {
    const int* route = nullptr;  // route_length link ids, the caller's
    std::uint32_t route_length = 0;
    std::uint32_t generation = 0;  // bumps on every reschedule; stale events are ignored
    double remaining_bytes = 0;
    double rate = 0;          // bytes/s at the moment
    double updated_at = 0;    // when remaining_bytes was last brought up to date
    double delay_s = 0;       // route latency + per-message overhead
    std::uint64_t token = 0;
    double rate_cap = kUncapped;  // bytes/s the flow never exceeds (start_flow)
  };
  static_assert(sizeof(Flow) == 64, "a flow's slot should be one cache line");
  // How many flow ids a link holds in its own cache line; more spill to an overflow list. Two
  // covers the usual load of a replay's link (a send and a receive crossing it, or none).
  static constexpr std::uint32_t kInlineFlows = 2;
  // What starting and draining a flow, and the lone-flow shortcut, read and write per link of
  // its route: 32 bytes, two links to a cache line. As one 64-byte line (with the fields now in
  // LinkFill), the links that flows cross at 64k GPUs (131,072 NIC links, 8 MiB) no longer fit
  // the last-level cache beside the flows and the replay's state; split, that replay's simulated
  // last-level misses fall by 12% (reads by 17%), while 32k changes little; alternating
  // wall-time runs showed 11-16% less at 64k, inside the spread of the shared machine they ran
  // on (BENCHMARKS.md, 2026-12-05). The byte count a start adds to lives here too, not beside
  // the latency, so that a start writes only lines it reads anyway and the latencies stay
  // read-only (BENCHMARKS.md, 2026-12-06, later).
  // The bandwidth steps, rarely read, stay in steps_ (and where each link is in them in
  // next_step_); collect_component's stamps are in link_mark_.
  struct alignas(32) Link {
    double capacity = 0;  // bytes/s now
    double bytes = 0;     // that crossed it so far
    // The draining flows crossing it, once per crossing, in arrival order (a removal moves the
    // last into the gap): in inline_flows while they fit, else all in
    // overflow_lists_[inline_flows[0]].
    std::uint32_t flow_count = 0;
    std::uint32_t inline_flows[kInlineFlows] = {};
    bool has_steps = false;
    bool step_pending = false;  // a kBandwidthStep event is in the queue
  };
  static_assert(sizeof(Link) == 32, "a link's hot state should fill half a cache line");
  // Progressive filling's state per link, only touched when a change joins several flows.
  struct LinkFill {
    double left = 0;              // capacity not yet given out
    std::uint32_t unfrozen = 0;   // flows on it without a rate yet
    std::uint32_t version = 0;    // heap entries of older versions are stale
  };
  // A link's fair share during progressive filling (min-heap entry), or a capped flow's cap:
  // then `link` is cap_entry(flow), below every link id.
  struct Share {
    double share;
    int link;
    std::uint32_t version;
  };
  static int cap_entry(std::uint32_t flow) { return -1 - static_cast<int>(flow); }
  static std::uint32_t capped_flow(int entry) { return static_cast<std::uint32_t>(-1 - entry); }
  // Gives unfrozen flow `f` the rate `share` and takes it off its links, pushing their new
  // shares (not `skip_link`'s).
  template <typename Push>
  void freeze(std::uint32_t f, double share, int skip_link, Push&& push);

  double plus_latencies(double delay_s, std::span<const int> route) const {
    for (int link : route) delay_s += latency_s_[link];
    return delay_s;
  }
  static std::span<const int> route_of(const Flow& flow) { return {flow.route, flow.route_length}; }
  std::span<const std::uint32_t> flows_on(int link) const;
  void add_flow(int link, std::uint32_t flow);
  // Removes one crossing of `flow` (the first listed), moving the last listed into its place.
  void remove_flow(int link, std::uint32_t flow);
  // A free flow slot, or a new one, for start_flow to fill.
  std::uint32_t take_slot();
  bool start(std::uint32_t index, double bytes, std::uint64_t token, double delay_s,
             double rate_cap);
  void settle(Flow& flow);  // brings remaining_bytes up to now()
  // Collects into component_ the draining flows joined to `seed_links` through shared links.
  void collect_component(std::span<const int> seed_links);
  void recompute(std::span<const int> seed_links);
  // recompute() when the change touches at most one flow, alone on every link of its route;
  // returns false, having changed nothing, otherwise.
  bool recompute_lone_flow(std::span<const int> seed_links);
  void progressive_filling();
  void schedule_drain(std::uint32_t index);
  // Schedules the delivery of the flow in slot `index`, which has nothing left to drain, and
  // frees the slot.
  void finish_draining(std::uint32_t index);
  void track_bandwidth_steps(int link);
  std::uint32_t next_generation(Flow& flow);

  Engine& engine_;
  std::uint32_t handler_id_;
  FlowListener& listener_;
  NetworkOptions options_;
  std::vector<Link> links_;
  // By link id, as links_: what start_flow reads (eight links to a cache line), and the
  // rarely touched rest.
  std::vector<double> latency_s_;
  std::vector<double> round_trip_s_;  // LinkCapacity::round_trip_s
  std::vector<LinkFill> fill_;
  std::vector<std::uint32_t> next_step_;  // index into steps_ of the link's next change
  // Every varying link's bandwidth steps end to end, each link's closed by a kEndOfSteps: at 64k
  // GPUs a vector per link (most of them empty) cost 6 MiB to build and free.
  static constexpr BandwidthPoint kEndOfSteps{std::numeric_limits<double>::infinity(), 0};
  std::vector<BandwidthPoint> steps_;
  // The flow lists of the links crossed by more than kInlineFlows flows, and those free for
  // reuse once a link's flows fit inline again: only busy links hold one.
  std::vector<std::vector<std::uint32_t>> overflow_lists_;
  std::vector<std::uint32_t> free_overflow_lists_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_slots_;

  // Scratch of the recomputation, reused so that no event allocates.
  std::vector<std::uint32_t> component_;
  std::vector<int> component_links_;
  std::vector<std::uint32_t> flow_mark_;  // epoch stamps by flow
  std::vector<std::uint32_t> link_mark_;  // epoch stamps by link
  std::vector<std::uint32_t> frozen_mark_;
  std::vector<Share> heap_;
  std::vector<double> old_rate_;
  std::uint32_t epoch_ = 0;

  std::size_t active_count_ = 0;
  std::uint64_t recomputations_ = 0;
  std::uint64_t flows_recomputed_ = 0;
  std::uint64_t lone_flow_recomputations_ = 0;
};

}  // namespace hetsim

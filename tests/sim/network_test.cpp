// The network's closed forms: a flow of S bytes over one link of bandwidth B and latency L takes
// L + S/B; equal flows sharing a link each get an equal share (DESIGN.md's oracles); max-min
// fairness across links, WAN transfers, per-message overhead and time-varying bandwidth.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <map>

#include "sim/network.hpp"

using namespace hetsim;

namespace {
// Records when each flow's last byte arrives.
struct Arrivals : FlowListener {
  explicit Arrivals(Engine& e) : engine(e) {}
  void on_flow_delivered(std::uint64_t token) override { at[token] = engine.now(); }
  Engine& engine;
  std::map<std::uint64_t, double> at;
};

// Starts a flow at a given time through an event of its own.
struct Starter : EventHandler {
  Starter(Engine& e, Network& n) : engine(e), network(n) { id = e.add_handler(*this); }
  void handle(const Event& event) override {
    network.start_flow(routes[event.payload], bytes[event.payload], event.payload);
  }
  Engine& engine;
  Network& network;
  std::uint32_t id = 0;
  std::map<std::uint64_t, std::vector<int>> routes;
  std::map<std::uint64_t, double> bytes;
};

// Routes to start flows on, alive for the whole test: start_flow keeps a pointer to its route
// until the flow is delivered.
const std::vector<int> kLink0{0}, kLink1{1}, kLinks01{0, 1}, kLinks012{0, 1, 2}, kLink0Twice{0, 0},
    kSameGpu{};

void check_close(double actual, double expected, const char* what) {
  std::printf("  %-44s expected %.9g s, actual %.9g s\n", what, expected, actual);
  CHECK(actual == doctest::Approx(expected).epsilon(1e-12));
}
}  // namespace

TEST_CASE("one flow over one link takes latency + bytes / bandwidth") {
  Engine engine;
  Arrivals arrivals(engine);
  const double bandwidth = 50e9, latency = 2e-6, bytes = 1e9;  // 50 GB/s, 2 us, 1 GB
  Network network(engine, {{bandwidth, latency}}, arrivals);
  network.start_flow(kLink0, bytes, 1);
  engine.run();
  check_close(arrivals.at[1], latency + bytes / bandwidth, "L + S/B");
  CHECK(network.active_flows() == 0);
}

TEST_CASE("two equal concurrent flows on one link take twice as long") {
  Engine engine;
  Arrivals arrivals(engine);
  const double bandwidth = 25e9, bytes = 4e8;
  Network network(engine, {{bandwidth, 0.0}}, arrivals);
  network.start_flow(kLink0, bytes, 1);
  network.start_flow(kLink0, bytes, 2);
  engine.run();
  check_close(arrivals.at[1], 2 * bytes / bandwidth, "first flow, 2S/B");
  check_close(arrivals.at[2], 2 * bytes / bandwidth, "second flow, 2S/B");
}

TEST_CASE("a flow moves at its bottleneck share and speeds up when a competitor leaves") {
  // Link 0 (10 GB/s) carries flows 1 and 2; flow 2 continues over link 1 (100 GB/s). Flow 1 has
  // S1 = 1 GB, flow 2 has S2 = 3 GB. Both get 5 GB/s until flow 1 ends at S1/5 = 0.2 s with
  // 2 GB of flow 2 left, which then runs alone at 10 GB/s: 0.2 + 2/10 = 0.4 s, plus latencies.
  Engine engine;
  Arrivals arrivals(engine);
  Network network(engine, {{10e9, 1e-6}, {100e9, 3e-6}}, arrivals);
  network.start_flow(kLink0, 1e9, 1);
  network.start_flow(kLinks01, 3e9, 2);
  engine.run();
  check_close(arrivals.at[1], 0.2 + 1e-6, "flow 1: S1/(B/2) + L0");
  check_close(arrivals.at[2], 0.4 + 4e-6, "flow 2: 0.2 + (S2 - S1)/B + L0 + L1");
}

TEST_CASE("a flow that starts later shares only from then on") {
  // Flow 1 (2 GB) alone on a 10 GB/s link for 0.1 s (1 GB done); flow 2 (0.5 GB) joins: both at
  // 5 GB/s; flow 2 ends at 0.1 + 0.1 = 0.2 s; flow 1 has 0.5 GB left, alone: 0.2 + 0.05 = 0.25 s.
  Engine engine;
  Arrivals arrivals(engine);
  Network network(engine, {{10e9, 0.0}}, arrivals);
  Starter starter(engine, network);
  starter.routes[1] = {0};
  starter.bytes[1] = 2e9;
  starter.routes[2] = {0};
  starter.bytes[2] = 0.5e9;
  engine.schedule(0.0, starter.id, 0, 1);
  engine.schedule(0.1, starter.id, 0, 2);
  engine.run();
  check_close(arrivals.at[2], 0.2, "late flow");
  check_close(arrivals.at[1], 0.25, "early flow");
}

TEST_CASE("max-min fair sharing: the three-flow two-link example") {
  // Bertsekas & Gallager, "Data Networks", section 6.5.2: flow A crosses links 1 and 2, flow B
  // link 1 only, flow C link 2 only; c1 = 1 GB/s, c2 = 2 GB/s. Link 1 is the bottleneck
  // (c1/2 = 0.5 < c2/2 = 1): A = B = 0.5 GB/s, and C takes what A leaves of link 2, 1.5 GB/s.
  // (Equal sharing per link would give C only 1 GB/s.) With A = B = 1 GB and C = 4.5 GB: A and B
  // end at 1/0.5 = 2 s; C has moved 3 GB by then and runs alone at 2 GB/s: 2 + 1.5/2 = 2.75 s.
  Engine engine;
  Arrivals arrivals(engine);
  Network network(engine, {{1e9, 0.0}, {2e9, 0.0}}, arrivals);
  network.start_flow(kLinks01, 1e9, 1);
  network.start_flow(kLink0, 1e9, 2);
  network.start_flow(kLink1, 4.5e9, 3);
  engine.run();
  check_close(arrivals.at[1], 2.0, "A: S_A / (c1/2)");
  check_close(arrivals.at[2], 2.0, "B: S_B / (c1/2)");
  check_close(arrivals.at[3], 2.75, "C: 2 + (S_C - 2(c2 - c1/2)) / c2");
}

TEST_CASE("a flow crossing a WAN link takes the route latency plus S over the bottleneck") {
  // NIC up (50 GB/s, 12 us), WAN (100 Gbit/s = 12.5 GB/s, 20 ms), NIC down (50 GB/s, 12 us):
  // 1 GB takes 12 us + 20 ms + 12 us + 1e9 / 12.5e9 s.
  Engine engine;
  Arrivals arrivals(engine);
  Network network(engine, {{50e9, 12e-6}, {12.5e9, 20e-3}, {50e9, 12e-6}}, arrivals);
  network.start_flow(kLinks012, 1e9, 1);
  engine.run();
  check_close(arrivals.at[1], 24e-6 + 20e-3 + 1e9 / 12.5e9, "L_route + S/B_wan");
}

TEST_CASE("a windowed flow over a long round trip runs at window / RTT, not at the link's rate") {
  // A transport with W bytes in flight per round trip moves at most W / RTT (Mathis et al.,
  // CCR 1997). NIC up (50 GB/s, 12 us, no round trip of its own: a software floor), WAN
  // (12.5 GB/s, 20 ms one way, so 40 ms round trip), NIC down. W = 3 MiB, one Linux TCP
  // socket's default window: 3 MiB / 40 ms = 78.6 MB/s, 159x below the WAN's rate, so 1 GB
  // takes 12.7 s where the uncapped model said 0.1 s. Before, latency was paid once per message.
  Engine engine;
  Arrivals arrivals(engine);
  std::vector<LinkCapacity> links{{50e9, 12e-6}, {12.5e9, 20e-3}, {50e9, 12e-6}};
  links[1].round_trip_s = 2 * 20e-3;
  const double window = 3.0 * 1024 * 1024;
  NetworkOptions options;
  options.connection_window_bytes = window;
  Network network(engine, links, arrivals, options);
  const double cap = network.window_rate_cap(kLinks012);
  check_close(cap, window / 40e-3, "rate cap W / RTT (reported in bytes/s)");
  CHECK(network.window_rate_cap(kLink0) == Network::kUncapped);  // no round trip
  Network unbounded(engine, links, arrivals);
  CHECK(unbounded.window_rate_cap(kLinks012) == Network::kUncapped);  // no window
  network.start_flow(kLinks012, 1e9, 1, 0, cap);
  engine.run();
  check_close(arrivals.at[1], 24e-6 + 20e-3 + 1e9 / cap, "L_route + S / (W / RTT)");
}

TEST_CASE("a capped flow leaves what it cannot use to the flows beside it (max-min with caps)") {
  // One 10 GB/s link: flow 1 capped at 2 GB/s, flow 2 uncapped. Max-min fairness with a cap
  // gives flow 1 its 2 GB/s and flow 2 the other 8 (equal sharing would give each 5). Flow 1:
  // 1 GB in 0.5 s; flow 2: 4 GB at 8 GB/s for 0.5 s, then 0 left: 0.5 s. Then a third case: a
  // cap above the fair share changes nothing (each at 5 GB/s).
  Engine engine;
  Arrivals arrivals(engine);
  Network network(engine, {{10e9, 0.0}, {10e9, 0.0}}, arrivals);
  network.start_flow(kLink0, 1e9, 1, 0, 2e9);
  network.start_flow(kLink0, 4e9, 2);
  network.start_flow(kLink1, 1e9, 3, 0, 7e9);
  network.start_flow(kLink1, 1e9, 4);
  engine.run();
  check_close(arrivals.at[1], 0.5, "capped flow: S / cap");
  check_close(arrivals.at[2], 0.5, "its neighbour: S / (B - cap)");
  check_close(arrivals.at[3], 0.2, "cap above the fair share: S / (B/2)");
  check_close(arrivals.at[4], 0.2, "its neighbour: S / (B/2)");
}

TEST_CASE("the per-message overhead is added once per flow") {
  Engine engine;
  Arrivals arrivals(engine);
  Network network(engine, {{10e9, 1e-6}}, arrivals, NetworkOptions{5e-6, true});
  network.start_flow(kLink0, 1e6, 1);
  network.start_flow(kSameGpu, 1e6, 2);  // same GPU: the overhead only
  engine.run();
  check_close(arrivals.at[1], 1e-6 + 5e-6 + 1e6 / 10e9, "L + overhead + S/B");
  check_close(arrivals.at[2], 5e-6, "overhead");
}

TEST_CASE("a link's bandwidth steps change the rate of the flows crossing it") {
  // 10 GB/s until 0.1 s, 2 GB/s from then on: 2 GB is 1 GB by 0.1 s, then 1 GB / 2 GB/s = 0.5 s.
  Engine engine;
  Arrivals arrivals(engine);
  const std::vector<hetsim::BandwidthPoint> steps{{0.1, 2e9}, {5.0, 20e9}, {10.0, 1e9}};
  LinkCapacity link{10e9, 1e-3, steps};
  Network network(engine, {link}, arrivals);
  network.start_flow(kLink0, 2e9, 1);
  engine.run();
  check_close(arrivals.at[1], 0.6 + 1e-3, "t1 + (S - B1 t1)/B2 + L");
  // The step at 5 s was queued while the flow ran and fires on an idle link; the one at 10 s is
  // never queued: an idle link's trace does not keep the engine running.
  CHECK(engine.now() == 5.0);
}

TEST_CASE("a link crossed twice by one flow and once each by two others shares max-min") {
  // Link 0 (bandwidth c, latency L) carries A twice (route {0, 0}, 3S bytes), B (S) and C (2S),
  // all started at 0: four crossings, each taking a share. Every crossing gets c/4, so
  // B drains at 4S/c; then three crossings get c/3 and C's last S drains 3S/c later; then A,
  // alone on both crossings, gets c/2 for its last S: 2S/c more. A's latency counts twice.
  Engine engine;
  Arrivals arrivals(engine);
  const double c = 10e9, latency = 1e-6, s = 1e8;
  Network network(engine, {{c, latency}}, arrivals);
  network.start_flow(kLink0Twice, 3 * s, 1);
  network.start_flow(kLink0, s, 2);
  network.start_flow(kLink0, 2 * s, 3);
  engine.run();
  check_close(arrivals.at[2], 4 * s / c + latency, "B: 4S/c + L");
  check_close(arrivals.at[3], 4 * s / c + 3 * s / c + latency, "C: 4S/c + 3S/c + L");
  check_close(arrivals.at[1], 4 * s / c + 3 * s / c + 2 * s / c + 2 * latency,
              "A: 4S/c + 3S/c + 2S/c + 2L");
  CHECK(network.link_bytes() == std::vector<double>{2 * 3 * s + s + 2 * s});
  CHECK(network.active_flows() == 0);
}

TEST_CASE("incremental recomputation gives the same times as recomputing every flow") {
  // 300 flows with random routes over 200 links, started at random times: the incremental path
  // (only the connected component of a change) must agree with a global recomputation.
  std::mt19937_64 random(20240611);
  const auto uniform = [&random] { return static_cast<double>(random() >> 11) * 0x1.0p-53; };
  std::vector<LinkCapacity> links;
  for (int l = 0; l < 200; ++l) links.push_back({1e9 * (1 + 9 * uniform()), 1e-6 * uniform(), {}});
  struct Spec { std::vector<int> route; double bytes; double start; };
  std::vector<Spec> specs;
  for (int f = 0; f < 300; ++f) {
    Spec s;
    const int hops = 1 + static_cast<int>(random() % 3);
    while (static_cast<int>(s.route.size()) < hops) {
      const int l = static_cast<int>(random() % 200);
      if (std::find(s.route.begin(), s.route.end(), l) == s.route.end()) s.route.push_back(l);
    }
    s.bytes = 1e6 + 1e8 * uniform();
    s.start = 0.05 * uniform();
    specs.push_back(s);
  }
  std::map<std::uint64_t, double> times[2];
  std::uint64_t touched[2] = {0, 0};
  for (int mode = 0; mode < 2; ++mode) {
    Engine engine;
    Arrivals arrivals(engine);
    Network network(engine, links, arrivals, NetworkOptions{0, mode == 0});
    Starter starter(engine, network);
    for (std::size_t f = 0; f < specs.size(); ++f) {
      starter.routes[f] = specs[f].route;
      starter.bytes[f] = specs[f].bytes;
      engine.schedule(specs[f].start, starter.id, 0, f);
    }
    engine.run();
    times[mode] = arrivals.at;
    touched[mode] = network.flows_recomputed();
  }
  REQUIRE(times[0].size() == specs.size());
  double worst = 0;
  for (const auto& [token, t] : times[1]) worst = std::max(worst, std::abs(times[0][token] - t) / t);
  std::printf("  incremental vs global: worst relative difference %.3g; flows recomputed %llu vs %llu\n",
              worst, static_cast<unsigned long long>(touched[0]),
              static_cast<unsigned long long>(touched[1]));
  CHECK(worst < 1e-9);
  CHECK(touched[0] < touched[1]);
}

TEST_CASE("the lone-flow shortcut gives the same rates as progressive filling, bit for bit") {
  // Random flow sets from sparse (most flows alone on their links: the shortcut) to dense (shared
  // links: progressive filling), some links with bandwidth steps, some routes crossing a link
  // twice; every delivery and drain time must be equal exactly with and without the shortcut.
  std::mt19937_64 random(20261202);
  const auto uniform = [&random] { return static_cast<double>(random() >> 11) * 0x1.0p-53; };
  for (const int link_count : {2000, 400, 40}) {
    std::vector<LinkCapacity> links;
    std::vector<std::vector<hetsim::BandwidthPoint>> steps(static_cast<std::size_t>(link_count));
    for (int l = 0; l < link_count; ++l) {
      LinkCapacity link{1e9 * (1 + 9 * uniform()), 1e-6 * uniform()};
      if (l % 7 == 0) {
        steps[l] = {{0.01 * uniform(), 1e9 * (1 + 9 * uniform())}};
        link.bandwidth_steps = steps[l];
      }
      links.push_back(link);
    }
    struct Spec { std::vector<int> route; double bytes; double start; };
    std::vector<Spec> specs;
    for (int f = 0; f < 400; ++f) {
      Spec s;
      const int hops = 1 + static_cast<int>(random() % 3);
      for (int h = 0; h < hops; ++h) s.route.push_back(static_cast<int>(random() % link_count));
      if (f % 50 == 0) s.route.push_back(s.route.front());  // crosses its first link twice
      s.bytes = 1e5 + 1e7 * uniform();
      s.start = 0.05 * uniform();
      specs.push_back(s);
    }
    struct Times : FlowListener {
      explicit Times(Engine& e) : engine(e) {}
      void on_flow_delivered(std::uint64_t token) override { delivered[token] = engine.now(); }
      void on_flow_drained(std::uint64_t token) override { drained[token] = engine.now(); }
      Engine& engine;
      std::map<std::uint64_t, double> delivered, drained;
    };
    std::map<std::uint64_t, double> delivered[2], drained[2];
    std::uint64_t lone[2] = {0, 0}, recomputations[2] = {0, 0}, events[2] = {0, 0};
    for (int mode = 0; mode < 2; ++mode) {
      Engine engine;
      Times times(engine);
      NetworkOptions options;
      options.lone_flow_shortcut = mode == 0;
      Network network(engine, links, times, options);
      Starter starter(engine, network);
      for (std::size_t f = 0; f < specs.size(); ++f) {
        starter.routes[f] = specs[f].route;
        starter.bytes[f] = specs[f].bytes;
        engine.schedule(specs[f].start, starter.id, 0, f);
      }
      engine.run();
      delivered[mode] = times.delivered;
      drained[mode] = times.drained;
      lone[mode] = network.lone_flow_recomputations();
      recomputations[mode] = network.recomputations();
      events[mode] = engine.events_processed();
    }
    CAPTURE(link_count);
    REQUIRE(delivered[0].size() == specs.size());
    CHECK(delivered[0] == delivered[1]);
    CHECK(drained[0] == drained[1]);
    CHECK(events[0] == events[1]);
    CHECK(recomputations[0] == recomputations[1]);
    CHECK(lone[1] == 0);
    std::printf("  %d links: %llu of %llu recomputations took the lone-flow shortcut\n", link_count,
                static_cast<unsigned long long>(lone[0]),
                static_cast<unsigned long long>(recomputations[0]));
    if (link_count == 2000) CHECK(lone[0] * 2 > recomputations[0]);
    if (link_count == 40) CHECK(lone[0] < recomputations[0]);
  }
}

TEST_CASE("long routes take the same times as short ones, bit for bit") {
  // A flow's slot points at its route whatever its length. Random flows on shared links (so
  // filling runs) start on their 1-4 link routes, then again with private links of unbounded
  // bandwidth and no latency added (7-10 links: every other flow, or every flow), which change
  // no rate and no delay; free slots pass between long and short routes. Delivery and drain
  // times and the shared links' bytes must be equal.
  std::mt19937_64 random(20261203);
  const auto uniform = [&random] { return static_cast<double>(random() >> 11) * 0x1.0p-53; };
  constexpr int kShared = 60;
  constexpr std::uint64_t kFlows = 500;
  std::vector<LinkCapacity> links;
  for (int l = 0; l < kShared; ++l) links.push_back({1e9 * (1 + 9 * uniform()), 1e-6 * uniform(), {}});
  std::map<std::uint64_t, std::vector<int>> routes;
  std::map<std::uint64_t, double> bytes, starts;
  for (std::uint64_t f = 0; f < kFlows; ++f) {
    const int hops = 1 + static_cast<int>(random() % 4);
    for (int h = 0; h < hops; ++h) routes[f].push_back(static_cast<int>(random() % kShared));
    bytes[f] = 1e5 + 1e7 * uniform();
    starts[f] = 0.05 * uniform();
  }
  constexpr int kPrivate = 6;
  for (std::uint64_t l = 0; l < kFlows * kPrivate; ++l) links.push_back({1e300, 0, {}});
  const auto lengthened = [&routes](bool every_flow) {
    std::map<std::uint64_t, std::vector<int>> longer = routes;
    for (auto& [f, route] : longer) {
      if (!every_flow && f % 2 == 0) continue;
      for (int p = 0; p < kPrivate; ++p) route.push_back(kShared + static_cast<int>(f) * kPrivate + p);
    }
    return longer;
  };
  const std::map<std::uint64_t, std::vector<int>> modes[3] = {routes, lengthened(false),
                                                              lengthened(true)};
  struct Times : FlowListener {
    explicit Times(Engine& e) : engine(e) {}
    void on_flow_delivered(std::uint64_t token) override { delivered[token] = engine.now(); }
    void on_flow_drained(std::uint64_t token) override { drained[token] = engine.now(); }
    Engine& engine;
    std::map<std::uint64_t, double> delivered, drained;
  };
  std::map<std::uint64_t, double> delivered[3], drained[3];
  std::vector<double> link_bytes[3];
  for (int mode = 0; mode < 3; ++mode) {
    Engine engine;
    Times times(engine);
    Network network(engine, links, times);
    Starter starter(engine, network);
    starter.routes = modes[mode];
    starter.bytes = bytes;
    for (const auto& [f, start] : starts) engine.schedule(start, starter.id, 0, f);
    engine.run();
    delivered[mode] = times.delivered;
    drained[mode] = times.drained;
    link_bytes[mode] = network.link_bytes();
    link_bytes[mode].resize(kShared);
    CHECK(network.active_flows() == 0);
  }
  REQUIRE(delivered[0].size() == kFlows);
  for (int mode = 1; mode < 3; ++mode) {
    CAPTURE(mode);
    CHECK(delivered[mode] == delivered[0]);
    CHECK(drained[mode] == drained[0]);
    CHECK(link_bytes[mode] == link_bytes[0]);
  }
}

TEST_CASE("links crowded by more flows than they hold inline keep their own flows as overflow lists are reused") {
  // Links 0 and 1 each carry three flows (more than a link holds inline); link 0 drops back to two
  // at 3S/c and gives its overflow list back; link 2 then takes three flows, and a list, at
  // 4S/c. Each link's flows are its own, so the shares are the closed forms of one link:
  // c/3 per flow, then c/2 on link 0 once its short flow is done.
  Engine engine;
  Arrivals arrivals(engine);
  const double c = 1e9, s = 1e8;
  Network network(engine, {{c, 0.0}, {c, 0.0}, {c, 0.0}}, arrivals);
  Starter starter(engine, network);
  const std::vector<int> on0{0}, on1{1};
  network.start_flow(on0, s, 1);
  network.start_flow(on0, 2 * s, 2);
  network.start_flow(on0, 2 * s, 3);
  for (std::uint64_t token : {4, 5, 6}) network.start_flow(on1, 4 * s, token);
  for (std::uint64_t token : {7, 8, 9}) {
    starter.routes[token] = {2};
    starter.bytes[token] = s;
    engine.schedule(4 * s / c, starter.id, 0, token);
  }
  engine.run();
  check_close(arrivals.at[1], 3 * s / c, "link 0's short flow, at c/3");
  for (std::uint64_t token : {2, 3}) check_close(arrivals.at[token], 5 * s / c, "link 0's others, then at c/2");
  for (std::uint64_t token : {4, 5, 6}) check_close(arrivals.at[token], 12 * s / c, "link 1's, at c/3 throughout");
  for (std::uint64_t token : {7, 8, 9}) check_close(arrivals.at[token], 7 * s / c, "link 2's, from 4S/c at c/3");
  CHECK(network.active_flows() == 0);
}

namespace {
// A sender that starts its next message on the same route as soon as the last one has drained
// (a replay's channel), recording when each message drained and arrived.
struct BackToBack : FlowListener {
  BackToBack(Engine& e, int messages, double bytes) : engine(e), left(messages), bytes(bytes) {}
  void send() { network->start_flow(kLink0, bytes, ++sent); }
  void on_flow_drained(std::uint64_t token) override {
    drained[token] = engine.now();
    in_flight_at_drain[token] = network->active_flows();
    if (--left > 0) send();
  }
  void on_flow_delivered(std::uint64_t token) override { delivered[token] = engine.now(); }
  Engine& engine;
  Network* network = nullptr;
  int left;
  double bytes;
  std::uint64_t sent = 0;
  std::map<std::uint64_t, double> drained, delivered;
  std::map<std::uint64_t, std::size_t> in_flight_at_drain;
};
}  // namespace

TEST_CASE("messages sent back to back each arrive a latency after they drain, under their own token") {
  // A message drains in S/B; the next starts then, while the last byte of the one before still
  // travels the latency (longer than a drain here, so several are in flight at once). Each must
  // be delivered once, under its own token, L after it drained.
  Engine engine;
  const double bandwidth = 10e9, latency = 45e-6, bytes = 1e5;  // drains in 10 us, L = 45 us
  const int messages = 12;
  BackToBack sender(engine, messages, bytes);
  Network network(engine, {{bandwidth, latency}}, sender);
  sender.network = &network;
  sender.send();
  engine.run();
  REQUIRE(sender.drained.size() == messages);
  REQUIRE(sender.delivered.size() == messages);
  for (std::uint64_t m = 1; m <= messages; ++m) {
    CHECK(sender.drained[m] == doctest::Approx(m * bytes / bandwidth).epsilon(1e-12));
    CHECK(sender.delivered[m] == doctest::Approx(sender.drained[m] + latency).epsilon(1e-12));
    // Messages 1..m have drained and, of them, those that drained more than L ago have arrived.
    const auto arrived = static_cast<std::size_t>(
        std::count_if(sender.delivered.begin(), sender.delivered.end(),
                      [&](const auto& d) { return d.second <= sender.drained[m]; }));
    CHECK(sender.in_flight_at_drain[m] == m - arrived);
  }
  CHECK(network.active_flows() == 0);
}

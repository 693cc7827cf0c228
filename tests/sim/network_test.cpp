// The network's closed forms: a flow of S bytes over one link of bandwidth B and latency L takes
// L + S/B; equal flows sharing a link each get an equal share (DESIGN.md's oracles).
#include <doctest/doctest.h>

#include <cstdio>
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
  void handle(const Event& event) override { network.start_flow(routes[event.payload], bytes[event.payload], event.payload); }
  Engine& engine;
  Network& network;
  std::uint32_t id = 0;
  std::map<std::uint64_t, std::vector<int>> routes;
  std::map<std::uint64_t, double> bytes;
};

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
  network.start_flow({0}, bytes, 1);
  engine.run();
  check_close(arrivals.at[1], latency + bytes / bandwidth, "L + S/B");
  CHECK(network.active_flows() == 0);
}

TEST_CASE("two equal concurrent flows on one link take twice as long") {
  Engine engine;
  Arrivals arrivals(engine);
  const double bandwidth = 25e9, bytes = 4e8;
  Network network(engine, {{bandwidth, 0.0}}, arrivals);
  network.start_flow({0}, bytes, 1);
  network.start_flow({0}, bytes, 2);
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
  network.start_flow({0}, 1e9, 1);
  network.start_flow({0, 1}, 3e9, 2);
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

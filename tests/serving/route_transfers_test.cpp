// Serving's transfers on the cluster's links (sim/serving/route_transfers.hpp), on one DGX A100
// whose GPUs reach each other through the NVSwitch: GPU a -> switch -> GPU b, each hop a link of
// 230 GB/s per direction. Alone on its route a transfer of S bytes arrives after the route's
// latency L plus S / B (B: the route's smallest bandwidth), the alpha-beta closed form; two equal
// transfers into one GPU share its switch-to-GPU link max-min fairly, B / 2 each, and both
// arrive after L + 2 S / B; a transfer between two other GPUs crosses none of their links and
// keeps L + S / B.
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>
#include <map>

#include "serving_test_support.hpp"
#include "sim/serving/route_transfers.hpp"

using namespace hetsim;
using namespace hetsim::serving;

namespace {

constexpr double kEps = 1e-12;

struct Arrivals : TransferListener {
  explicit Arrivals(const Engine& e) : engine(e) {}
  void on_transfer_done(std::uint64_t tag) override { at[tag] = engine.now(); }
  const Engine& engine;
  std::map<std::uint64_t, double> at;
};

double alone_s(const Cluster& cluster, GpuId src, GpuId dst, double bytes) {
  return cluster.route_latency_s(src, dst) +
         bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(src, dst);
}

bool share_a_link(const Cluster& cluster, GpuId a_src, GpuId a_dst, GpuId b_src, GpuId b_dst) {
  const auto& a = cluster.route(a_src, a_dst);
  const auto& b = cluster.route(b_src, b_dst);
  return std::any_of(a.begin(), a.end(),
                     [&](LinkId l) { return std::find(b.begin(), b.end(), l) != b.end(); });
}

}  // namespace

TEST_CASE(
    "a transfer alone on its route arrives after the closed form, its slowest piece deciding") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  Engine engine;
  Arrivals arrivals(engine);
  RouteTransfers transfers(engine, cluster, arrivals);
  const double bytes = 100 * 131072.0;  // a 100-token prompt's K and V, Llama-3-8B in bf16
  transfers.start(7, {{0, 1, bytes}});
  // Two pieces on disjoint routes: the larger one decides.
  transfers.start(8, {{2, 3, bytes}, {4, 5, 3 * bytes}});
  engine.run();
  const double one = alone_s(cluster, 0, 1, bytes);
  const double slowest = alone_s(cluster, 4, 5, 3 * bytes);
  std::cout << "alone: expected " << one * 1e6 << " us, got " << arrivals.at[7] * 1e6
            << " us; two pieces: expected " << slowest * 1e6 << " us, got " << arrivals.at[8] * 1e6
            << " us\n";
  CHECK(arrivals.at.at(7) == doctest::Approx(one).epsilon(kEps));
  CHECK(arrivals.at.at(8) == doctest::Approx(slowest).epsilon(kEps));
}

TEST_CASE(
    "two equal transfers over one shared link each take twice the drain; a disjoint one is "
    "unaffected") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  // The premise: 0 -> 2 and 1 -> 2 meet on the link into GPU 2; 3 -> 4 crosses neither.
  REQUIRE(share_a_link(cluster, 0, 2, 1, 2));
  REQUIRE_FALSE(share_a_link(cluster, 0, 2, 3, 4));
  REQUIRE_FALSE(share_a_link(cluster, 1, 2, 3, 4));
  Engine engine;
  Arrivals arrivals(engine);
  RouteTransfers transfers(engine, cluster, arrivals);
  const double bytes = 512 * 131072.0;
  transfers.start(0, {{0, 2, bytes}});
  transfers.start(1, {{1, 2, bytes}});
  transfers.start(2, {{3, 4, bytes}});
  engine.run();
  const double latency = cluster.route_latency_s(0, 2);
  const double drain = bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(0, 2);
  std::cout << "shared link: expected " << (latency + 2 * drain) * 1e6 << " us each, got "
            << arrivals.at[0] * 1e6 << " and " << arrivals.at[1] * 1e6 << " us; disjoint: expected "
            << (latency + drain) * 1e6 << " us, got " << arrivals.at[2] * 1e6 << " us\n";
  CHECK(arrivals.at.at(0) == doctest::Approx(latency + 2 * drain).epsilon(kEps));
  CHECK(arrivals.at.at(1) == doctest::Approx(latency + 2 * drain).epsilon(kEps));
  CHECK(arrivals.at.at(2) == doctest::Approx(alone_s(cluster, 3, 4, bytes)).epsilon(kEps));
}

TEST_CASE("a transfer started while another drains takes what is left of the link") {
  // 0 -> 2 starts alone; when half of it has drained, 1 -> 2 starts with as many bytes. They share
  // the link into GPU 2 until the first ends (the first's other half at B / 2: one more full drain
  // time D), then the second drains its remaining half alone: the first arrives at L + D/2 + D,
  // the second, started at D/2, at D/2 + D + D/2 + L.
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  Engine engine;
  Arrivals arrivals(engine);
  RouteTransfers transfers(engine, cluster, arrivals);
  const double bytes = 512 * 131072.0;
  const double latency = cluster.route_latency_s(0, 2);
  const double drain = bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(0, 2);
  struct Later : EventHandler {
    void handle(const Event&) override { transfers->start(1, {{1, 2, bytes}}); }
    RouteTransfers* transfers = nullptr;
    double bytes = 0;
  } later;
  later.transfers = &transfers;
  later.bytes = bytes;
  transfers.start(0, {{0, 2, bytes}});
  engine.schedule(drain / 2, engine.add_handler(later), 0, 0);
  engine.run();
  CHECK(arrivals.at.at(0) == doctest::Approx(latency + 1.5 * drain).epsilon(kEps));
  CHECK(arrivals.at.at(1) == doctest::Approx(latency + 2 * drain).epsilon(kEps));
}

// Pipeline messages over a slow, long link: a send stream is busy while a message drains
// (S/B) and the next message leaves while the previous one is still in flight, so latency is
// paid once per dependency chain, not once per message (a transport keeps several messages in
// flight; NCCL's send/recv posts them asynchronously).
//
// GPipe on p = 2 ranks, equal F = f and B = b on both, m microbatches, one message of S bytes per
// cross-rank dependency over a route of bottleneck bandwidth B_w and one-way latency L, with
// S/B_w <= min(f, b) so no message waits for the stream. Rank 0's forwards end at k f, each
// activation arrives S/B_w + L later, one f apart, so rank 1 runs its forwards back to back from
// f + S/B_w + L; its backwards follow at once and their gradients reach rank 0 one b apart, the
// first b + S/B_w + L after rank 1's last forward. Rank 0's last backward ends at
//     T = (m + 1)(f + b) + 2 (S/B_w + L),
// the GPipe makespan (m + p - 1)(f + b) plus one round trip per flush. Two latencies L1, L2
// give T2 - T1 = 2 (L2 - L1), whatever m is.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "schedules/generators.hpp"
#include "sim/cluster_links.hpp"
#include "sim/pipeline_replay.hpp"
#include "topologies/cluster_spec.hpp"

using namespace hetsim;

namespace {

constexpr double kGbit = 1e9 / 8;  // bytes/s in 1 Gbit/s

// Two sites of one GPU each, joined by one WAN link of 1 Gbit/s and one-way `latency_s`. The
// NICs are 400 Gbit/s with `nic_latency_s` each (none by default, so that the WAN link is the
// whole story).
Cluster two_gpus_one_link(double latency_s, double nic_latency_s = 0) {
  ClusterSpec spec;
  spec.name = "two-gpus-one-link";
  for (const char* name : {"a", "b"}) {
    NodeGroupSpec group;
    group.name = "node";
    group.count = 1;
    group.gpu_type = "h100-sxm";
    group.gpus_per_node = 1;
    group.intra_node = {450e9, 0};
    group.nic = {400 * kGbit, nic_latency_s};
    spec.sites.push_back(SiteSpec{name, 0, 1, {group}});
  }
  spec.wan_links.push_back(WanLinkSpec{0, 1, {1 * kGbit, latency_s}, 0});
  return build_cluster(spec);
}

// Worker w is GPU w: one flow per transfer, on the cluster's route.
class GpuRoutes : public TransferRoutes {
 public:
  explicit GpuRoutes(const Cluster& cluster) : cluster_(cluster) {}
  const std::vector<std::span<const int>>& routes(int src, int dst) override {
    routes_ = {cluster_.route(src, dst)};
    return routes_;
  }

 private:
  const Cluster& cluster_;
  std::vector<std::span<const int>> routes_;
};

// GPipe over the cluster's two GPUs: every F takes f, every B b, every message `bytes`, carried
// on `routes`.
ReplayStats replay_gpipe(const Cluster& cluster, TransferRoutes& routes, int microbatches, double f,
                         double b, double bytes, P2pSync p2p = P2pSync::kAsync,
                         double connection_window_bytes = 0) {
  const Timetable timetable = make_gpipe(2, microbatches);
  ChunkCost cost;
  cost.forward_s = f;
  cost.backward_input_s = b;
  cost.output_bytes = bytes;
  ReplayInputs inputs;
  inputs.timetable = &timetable;
  inputs.costs.assign(2, {cost});
  inputs.routes = &routes;
  inputs.links = network_links(cluster);
  inputs.p2p = p2p;
  inputs.connection_window_bytes = connection_window_bytes;
  const ReplayStats stats = replay_iteration(inputs);
  CHECK(stats.transfers == 2u * microbatches);
  return stats;
}

double gpipe_iteration_s(int microbatches, double f, double b, double bytes, double latency_s,
                         P2pSync p2p = P2pSync::kAsync, double connection_window_bytes = 0) {
  const Cluster cluster = two_gpus_one_link(latency_s);
  GpuRoutes routes(cluster);
  return replay_gpipe(cluster, routes, microbatches, f, b, bytes, p2p, connection_window_bytes)
      .iteration_s;
}

void check_exact(double actual, double expected, const std::string& what) {
  std::printf("  %-52s expected %.12g s, actual %.12g s\n", what.c_str(), expected, actual);
  CHECK(std::abs(actual - expected) <= 1e-12 * std::abs(expected));
}

}  // namespace

TEST_CASE("pipeline latency is paid once per flush, not once per microbatch") {
  const int m = 32;
  const double f = 10e-3, b = 20e-3;  // s
  const double bytes = 1e6;           // 8 ms on the 1 Gbit/s link: drains within f and b
  const double near = 0.1e-3, far = 50e-3;
  const double drain = bytes / (1 * kGbit);
  const double t_near = gpipe_iteration_s(m, f, b, bytes, near);
  const double t_far = gpipe_iteration_s(m, f, b, bytes, far);
  check_exact(t_near, (m + 1) * (f + b) + 2 * (drain + near), "GPipe p=2 m=32, L = 0.1 ms: (m+1)(f+b) + 2(S/B+L)");
  check_exact(t_far, (m + 1) * (f + b) + 2 * (drain + far), "GPipe p=2 m=32, L = 50 ms: (m+1)(f+b) + 2(S/B+L)");
  check_exact(t_far - t_near, 2 * (far - near), "difference: one round trip 2 (L2 - L1)");
}

TEST_CASE("a runtime that waits for its sends pays the latency once per microbatch") {
  // --blocking-p2p (DS3Lab's GpipeAsync: one NCCL stream for sends and receives, in program
  // order). A send completes when it is delivered, S/B_w + L after it starts, and starts only
  // once the receiver has posted its receive. Rank 0's F(i + 1) waits for send(i), which waits
  // for rank 1 to finish F(i - 1): activation i arrives (i + 1)(f + T), T = S/B_w + L, and the
  // backward runs alike at b + T a gradient, so
  //     T = (m + 1)(f + b) + 2 m (S/B_w + L),
  // against (m + 1)(f + b) + 2 (S/B_w + L) when sends are left in flight: 2m latencies, not 2.
  // Before --blocking-p2p, GPipe always left its sends in flight, and 10 ms of added delay cost
  // DS3Lab's 12-stage pipeline 0.10 s instead of the measured 2.41 s.
  const int m = 32;
  const double f = 10e-3, b = 20e-3, bytes = 1e6;
  const double near = 0.1e-3, far = 50e-3;
  const double drain = bytes / (1 * kGbit);
  const double t_near = gpipe_iteration_s(m, f, b, bytes, near, P2pSync::kSeparateWithinPhase);
  const double t_far = gpipe_iteration_s(m, f, b, bytes, far, P2pSync::kSeparateWithinPhase);
  check_exact(t_near, (m + 1) * (f + b) + 2 * m * (drain + near), "blocking, L = 0.1 ms: (m+1)(f+b) + 2m(S/B+L)");
  check_exact(t_far, (m + 1) * (f + b) + 2 * m * (drain + far), "blocking, L = 50 ms: (m+1)(f+b) + 2m(S/B+L)");
  check_exact(t_far - t_near, 2 * m * (far - near), "difference: 2m (L2 - L1)");
}

TEST_CASE("a connection's window bounds its messages' rate on a long round trip") {
  // The WAN link (1 Gbit/s, 50 ms one way) has a 100 ms round trip; a connection that keeps
  // W = 3 MiB in flight (one default Linux TCP socket: sim/transport_window.hpp) moves at most
  // W / 100 ms = 31.5 MB/s, below the link's 125 MB/s: each 1 MB message drains in 31.8 ms, not
  // 8 ms. With S/cap <= min(f, b) the first test's argument holds with the capped drain:
  //     T = (m + 1)(f + b) + 2 (S / (W / RTT) + L).
  const int m = 8;
  const double f = 40e-3, b = 80e-3, bytes = 1e6, latency = 50e-3;
  const double window = 3.0 * 1024 * 1024;
  const double capped = bytes / (window / (2 * latency));
  check_exact(gpipe_iteration_s(m, f, b, bytes, latency, P2pSync::kAsync, window),
              (m + 1) * (f + b) + 2 * (capped + latency), "GPipe p=2 m=8, window 3 MiB over 100 ms RTT");
  check_exact(gpipe_iteration_s(m, f, b, bytes, latency, P2pSync::kAsync, 0),
              (m + 1) * (f + b) + 2 * (bytes / (1 * kGbit) + latency), "same, no window: S/B_w");
}

TEST_CASE("messages that drain slower than they are made queue on the stream, not on the latency") {
  // With f < S/B_w <= b the link paces the forwards: activation k leaves at f + k S/B_w and
  // arrives f + (k + 1) S/B_w + L, so rank 1's last forward ends at 2f + m S/B_w + L. Its
  // backwards run back to back and their gradients leave unqueued (b >= S/B_w); rank 0's
  // backwards run back to back from the first gradient's arrival, 2f + (m + 1) S/B_w + b + 2L:
  //     T = 2f + (m + 1)(S/B_w + b) + 2L.
  const int m = 8;
  const double f = 2e-3, b = 20e-3, latency = 30e-3;
  const double bytes = 1e6;  // 8 ms: more than f, less than b
  const double drain = bytes / (1 * kGbit);
  check_exact(gpipe_iteration_s(m, f, b, bytes, latency), 2 * f + (m + 1) * drain + (m + 1) * b + 2 * latency,
              "GPipe p=2 m=8, S/B > f: 2f + (m+1)(S/B + b) + 2L");
}

TEST_CASE("a channel asks for routes and wire share once, and every message pays the share") {
  // GPipe p = 2, m = 8 as above, with half of each message's bytes on the wire (a compressed
  // route): T = (m + 1)(f + b) + 2 (S/2 / B_w + L), and each link of a route carries m S/2.
  // The routes answer from one reused vector, so a channel must keep a copy of what it was told.
  struct HalvingRoutes : TransferRoutes {
    explicit HalvingRoutes(const Cluster& c) : cluster(c) {}
    const std::vector<std::span<const int>>& routes(int src, int dst) override {
      ++route_calls;
      answer = {cluster.route(src, dst)};
      return answer;
    }
    double wire_share(int /*src*/, int /*dst*/) override {
      ++share_calls;
      return 0.5;
    }
    const Cluster& cluster;
    std::vector<std::span<const int>> answer;
    int route_calls = 0;
    int share_calls = 0;
  };
  const int m = 8;
  const double f = 10e-3, b = 20e-3, bytes = 1e6, latency = 5e-3;
  const Cluster cluster = two_gpus_one_link(latency);
  HalvingRoutes routes(cluster);
  const ReplayStats stats = replay_gpipe(cluster, routes, m, f, b, bytes);
  CHECK(routes.route_calls == 2);  // one channel each way
  CHECK(routes.share_calls == 2);
  check_exact(stats.iteration_s, (m + 1) * (f + b) + 2 * (0.5 * bytes / (1 * kGbit) + latency),
              "GPipe p=2 m=8, half the bytes on the wire");
  std::vector<double> expected(network_links(cluster).size(), 0);
  for (const auto& [src, dst] : {std::pair{0, 1}, std::pair{1, 0}})
    for (int link : cluster.route(src, dst)) expected[link] += m * 0.5 * bytes;
  CHECK(stats.link_bytes == expected);
}

TEST_CASE("a transfer whose flows' routes differ in latency arrives with the last of its flows") {
  // Each transfer is two flows, each on one link of the cluster's route: the sender's NIC link
  // (400 Gbit/s; latency L = half the NIC figure, the route's other end holding the other half)
  // and the WAN link (1 Gbit/s, no latency). Each flow arrives its own
  // drain plus its own route's latency, so the transfer arrives
  //     D = max(S/400G + L, S/1G + 0)
  // after it leaves, and GPipe p = 2 takes T = (m + 1)(f + b) + 2 D (the first test's argument,
  // S/1G <= min(f, b)). A replay that gave both flows the larger latency would make it
  // S/1G + L.
  struct TwoLinkRoutes : TransferRoutes {
    TwoLinkRoutes(const Cluster& c, const std::vector<LinkCapacity>& l) : cluster(c), links(l) {}
    const std::vector<std::span<const int>>& routes(int src, int dst) override {
      const std::span<const int> route = cluster.route(src, dst);
      std::size_t wan = 0;
      for (std::size_t i = 1; i < route.size(); ++i)
        if (links[route[i]].bandwidth_bytes_per_s < links[route[wan]].bandwidth_bytes_per_s) wan = i;
      REQUIRE(wan != 0);  // the route starts at the sender's NIC
      answer = {route.subspan(0, 1), route.subspan(wan, 1)};
      return answer;
    }
    const Cluster& cluster;
    const std::vector<LinkCapacity>& links;
    std::vector<std::span<const int>> answer;
  };
  const int m = 8;
  const double f = 10e-3, b = 20e-3, bytes = 1e6, nic_latency = 5e-3;  // S/1G = 8 ms > S/400G + L
  const Cluster cluster = two_gpus_one_link(0, nic_latency);
  const std::vector<LinkCapacity> links = network_links(cluster);
  TwoLinkRoutes routes(cluster, links);
  const ReplayStats stats = replay_gpipe(cluster, routes, m, f, b, bytes);
  const double arrival = std::max(bytes / (400 * kGbit) + nic_latency / 2, bytes / (1 * kGbit));
  check_exact(stats.iteration_s, (m + 1) * (f + b) + 2 * arrival,
              "GPipe p=2 m=8, flows of unequal latency: (m+1)(f+b) + 2 max(d_i + L_i)");
}

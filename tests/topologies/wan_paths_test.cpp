// Across sites, routes follow the chain of WAN links that carries the cluster's representative
// message soonest: sum of one-way latencies + S / bottleneck bandwidth, S = 64 MiB unless
// wan_routing.message_MiB says otherwise (0: the least-latency chain).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "base/error.hpp"
#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/cluster_loader.hpp"
#include "topologies/cluster_spec.hpp"

using hetsim::Cluster;
using hetsim::load_cluster;
using hetsim::test::kGpuTypes;
using hetsim::test::write_scratch_file;

namespace {

// Three sites of one 1-GPU node each. WAN one-way latencies: a-c 50 ms direct, a-b 30 ms and a
// second a-b link of 10 ms, b-c 15 ms. Least latency a -> c: a-b#2 then b-c = 25 ms; for 64 MiB
// the direct 400 Gbit/s link is sooner (50 ms + 1.3 ms against 25 ms + 53.7 ms at 10 Gbit/s).
const char* kTriangle = R"({
  "name": "triangle",
  "sites": [
    { "name": "a", "fabric": { "latency_us": 0 }, "node_groups": [ { "name": "n", "count": 1,
      "gpu": "h100-sxm", "gpus_per_node": 1, "intra_node": { "bandwidth_GBps": 450, "latency_us": 0 },
      "nic": { "bandwidth_Gbps": 400, "latency_us": 4 } } ] },
    { "name": "b", "fabric": { "latency_us": 0 }, "node_groups": [ { "name": "n", "count": 1,
      "gpu": "h100-sxm", "gpus_per_node": 1, "intra_node": { "bandwidth_GBps": 450, "latency_us": 0 },
      "nic": { "bandwidth_Gbps": 400, "latency_us": 4 } } ] },
    { "name": "c", "fabric": { "latency_us": 0 }, "node_groups": [ { "name": "n", "count": 1,
      "gpu": "h100-sxm", "gpus_per_node": 1, "intra_node": { "bandwidth_GBps": 450, "latency_us": 0 },
      "nic": { "bandwidth_Gbps": 400, "latency_us": 4 } } ] } ],
  "wan_links": [
    { "sites": ["a", "c"], "bandwidth_Gbps": 400, "latency_ms": 50, "egress_usd_per_GB": 0.01 },
    { "sites": ["a", "b"], "bandwidth_Gbps": 100, "latency_ms": 30, "egress_usd_per_GB": 0.02 },
    { "sites": ["b", "a"], "bandwidth_Gbps": 40, "latency_ms": 10, "egress_usd_per_GB": 0.05 },
    { "sites": ["b", "c"], "bandwidth_Gbps": 10, "latency_ms": 15, "egress_usd_per_GB": 0.08 } ] })";

std::vector<std::string> names(const Cluster& cluster, int from, int to) {
  std::vector<std::string> out;
  for (const auto id : cluster.route(from, to)) out.emplace_back(cluster.links()[id].name);
  return out;
}

}  // namespace

// The triangle routed for messages of `message_mib` (wan_routing.message_MiB).
Cluster triangle(double message_mib) {
  std::string text = kTriangle;
  text.insert(text.find("\"sites\""), "\"wan_routing\": { \"message_MiB\": " + std::to_string(message_mib) + " },\n  ");
  return load_cluster(write_scratch_file("triangle.json", text), kGpuTypes);
}

double route_time_s(const Cluster& cluster, int from, int to, double bytes) {
  return cluster.route_latency_s(from, to) + bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(from, to);
}

TEST_CASE("for small messages the least-latency WAN chain wins over a direct link and a slower parallel link") {
  const Cluster cluster = triangle(0);
  REQUIRE(cluster.gpu_count() == 3);
  CHECK(names(cluster, 0, 2) ==
        std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->b#2", "b->c", "c/fabric->c/n0/gpu0"});
  // 4 us of NIC + (10 + 15) ms of WAN.
  CHECK(std::fabs(cluster.route_latency_s(0, 2) - 0.025004) < 1e-9 * 0.025004);
  // Bottleneck: the 10 Gbit/s b-c link; egress adds up along the chain: 0.05 + 0.08 USD/GB.
  CHECK(cluster.route_bottleneck_bandwidth_bytes_per_s(0, 2) == 10e9 / 8);
  CHECK(std::fabs(cluster.route_egress_usd_per_byte(0, 2) - 0.13e-9) < 1e-9 * 0.13e-9);
  // Reverse direction takes the same chain backwards.
  CHECK(names(cluster, 2, 0) ==
        std::vector<std::string>{"c/n0/gpu0->c/fabric",
                                 "c->b", "b->a#2", "a/fabric->a/n0/gpu0"});
  // One-GPU nodes have no intra-node links: 3 GPUs x 2 NIC links + 4 WAN links x 2.
  CHECK(cluster.links().size() == 3 * 2 + 4 * 2);
}

TEST_CASE("by default the WAN route carries 64 MiB soonest: the direct link, and the faster parallel one") {
  const Cluster cluster = load_cluster(write_scratch_file("triangle-default.json", kTriangle), kGpuTypes);
  CHECK(names(cluster, 0, 2) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->c", "c/fabric->c/n0/gpu0"});
  // a -> b: 30 ms + 64 MiB / 100 Gbit/s = 35.4 ms on the first link, 10 ms + 13.4 ms on #2.
  CHECK(names(cluster, 0, 1) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->b#2", "b/fabric->b/n0/gpu0"});
  const double bytes = 64.0 * 1024 * 1024;
  const Cluster small = triangle(0);
  std::printf("  64 MiB a -> c: direct %.6f s, least-latency chain %.6f s\n", route_time_s(cluster, 0, 2, bytes),
              route_time_s(small, 0, 2, bytes));
  CHECK(route_time_s(cluster, 0, 2, bytes) < route_time_s(small, 0, 2, bytes));
}

TEST_CASE("direct-or-detour.json: a fast direct link is not bypassed for a shorter, slow detour") {
  // a-b direct: 30 ms + 64 MiB / 400 Gbit/s = 31.342 ms. Through c: 20 ms + 64 MiB / 10 Gbit/s =
  // 73.687 ms. The least-latency rule took the detour.
  const Cluster cluster =
      load_cluster(fmt::format("{}/tests/data/clusters/direct-or-detour.json", HETSIM_SOURCE_DIR), kGpuTypes);
  CHECK(names(cluster, 0, 1) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->b", "b/fabric->b/n0/gpu0"});
  CHECK(names(cluster, 1, 0) == std::vector<std::string>{"b/n0/gpu0->b/fabric", "b->a", "a/fabric->a/n0/gpu0"});
  const double bytes = 64.0 * 1024 * 1024;
  const double expected = 30e-3 + bytes / (400e9 / 8);
  std::printf("  64 MiB a -> b: expected %.9f s (direct), actual %.9f s\n", expected, route_time_s(cluster, 0, 1, bytes));
  CHECK(std::fabs(route_time_s(cluster, 0, 1, bytes) - expected) < 1e-12);
  // Where the direct link is the only way, nothing changes: a -> c and c -> b stay direct.
  CHECK(names(cluster, 0, 2) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->c", "c/fabric->c/n0/gpu0"});
}

TEST_CASE("wan_routing.message_MiB: the message size routes are chosen for, checked") {
  // a -> b: 30 ms at 100 Gbit/s on the first link, 10 ms at 40 Gbit/s on #2; the first is
  // sooner above S = 20 ms / (1/5e9 - 1/12.5e9) B/s = 166.7 MB.
  CHECK(names(triangle(100), 0, 1) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->b#2", "b/fabric->b/n0/gpu0"});
  CHECK(names(triangle(1000), 0, 1) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->b", "b/fabric->b/n0/gpu0"});
  std::string text = kTriangle;
  text.insert(text.find("\"sites\""), "\"wan_routing\": { \"message_MiB\": -1 },\n  ");
  const std::string path = write_scratch_file("triangle-bad.json", text);
  CHECK_THROWS_WITH_AS(load_cluster(path, kGpuTypes),
                       (path + ": /wan_routing/message_MiB: got -1; expected a number >= 0").c_str(),
                       hetsim::InputError);
}

TEST_CASE("of two WAN links alike in latency and bandwidth, the route takes the one listed first") {
  // The triangle's a-b links made equal (10 ms, 40 Gbit/s): the route's cost cannot choose, so
  // the order of the links in the file does, both ways; the egress price (0.02 against 0.05
  // USD/GB) tells which link was taken.
  std::string text = kTriangle;
  text.replace(text.find("\"bandwidth_Gbps\": 100, \"latency_ms\": 30"),
               std::string("\"bandwidth_Gbps\": 100, \"latency_ms\": 30").size(),
               "\"bandwidth_Gbps\": 40, \"latency_ms\": 10");
  const Cluster cluster = load_cluster(write_scratch_file("triangle-twins.json", text), kGpuTypes);
  CHECK(names(cluster, 0, 1) == std::vector<std::string>{"a/n0/gpu0->a/fabric", "a->b", "b/fabric->b/n0/gpu0"});
  CHECK(names(cluster, 1, 0) == std::vector<std::string>{"b/n0/gpu0->b/fabric", "b->a", "a/fabric->a/n0/gpu0"});
  CHECK(std::fabs(cluster.route_egress_usd_per_byte(0, 1) - 0.02e-9) < 1e-9 * 0.02e-9);
}

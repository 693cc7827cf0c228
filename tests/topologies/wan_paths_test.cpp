// Across sites, routes follow the least-latency chain of WAN links (Dijkstra on the site
// switches), even when that chain has more hops than a direct link.
#include <doctest/doctest.h>

#include <cmath>

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
// second a-b link of 10 ms, b-c 15 ms. Least latency a -> c: a-b#2 then b-c = 25 ms.
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
  for (const auto id : cluster.route(from, to)) out.push_back(cluster.links()[id].name);
  return out;
}

}  // namespace

TEST_CASE("the least-latency WAN chain wins over a direct link and over a slower parallel link") {
  const Cluster cluster = load_cluster(write_scratch_file("triangle.json", kTriangle), kGpuTypes);
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

TEST_CASE("build_cluster refuses sites that no WAN path joins") {
  hetsim::ClusterSpec spec;
  spec.name = "split";
  for (const char* name : {"x", "y"}) {
    hetsim::SiteSpec site;
    site.name = name;
    hetsim::NodeGroupSpec group;
    group.name = "n";
    group.count = 1;
    group.gpu_type = "h100-sxm";
    group.gpus_per_node = 2;
    group.intra_node = {450e9, 1e-6};
    group.nic = {50e9, 2e-6};
    site.node_groups.push_back(group);
    spec.sites.push_back(site);
  }
  CHECK_THROWS_WITH_AS(hetsim::build_cluster(spec),
                       "cluster \"split\": no WAN path between sites \"x\" and \"y\"", hetsim::Error);
  spec.wan_links.push_back({0, 1, {1.25e10, 0.005}, 0});
  const Cluster cluster = hetsim::build_cluster(spec);
  CHECK(cluster.source_file().empty());
  CHECK(std::fabs(cluster.route_latency_s(0, 3) - (2e-6 + 0.005)) < 1e-9 * 0.005);
}

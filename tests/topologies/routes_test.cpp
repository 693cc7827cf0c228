// Routes between GPUs: their shape (which links, in which order), their latency by the formula
// documented in topologies/README.md, caching, and the path being a real path of the fabric graph.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/cluster_impl.hpp"
#include "topologies/cluster_loader.hpp"
#include "topologies/route_table.hpp"

using hetsim::Cluster;
using hetsim::LinkClass;
using hetsim::LinkId;
using hetsim::load_cluster;
using hetsim::test::kGpuTypes;
using hetsim::test::shipped_cluster;
using hetsim::test::write_scratch_file;

namespace {

// The route composed afresh, bypassing the cache.
std::vector<LinkId> composed_route(const Cluster& cluster, int from, int to) {
  std::vector<LinkId> route;
  cluster.impl().compose_route(from, to, route);
  return route;
}

std::vector<std::string> link_names(const Cluster& cluster, std::span<const LinkId> route) {
  std::vector<std::string> names;
  for (const LinkId id : route) names.emplace_back(cluster.links()[id].name);
  return names;
}

bool close(double expected, double actual) {
  return std::fabs(expected - actual) <= 1e-9 * std::fabs(expected);
}

// One site with two node groups whose NICs differ, so each latency term can be told apart:
// intra_node 3 us, fabric 1 us, NICs 2 us ("fast") and 6 us ("slow").
const char* kTwoGroupSite = R"({
  "name": "mixed", "sites": [ { "name": "dc", "fabric": { "latency_us": 1.0 },
    "node_groups": [
      { "name": "fast", "count": 2, "gpu": "h100-sxm", "gpus_per_node": 4,
        "intra_node": { "bandwidth_GBps": 450, "latency_us": 3.0 },
        "nic": { "bandwidth_Gbps": 400, "latency_us": 2.0 } },
      { "name": "slow", "count": 1, "gpu": "a100-80gb", "gpus_per_node": 2,
        "intra_node": { "bandwidth_GBps": 300, "latency_us": 3.0 },
        "nic": { "bandwidth_Gbps": 200, "latency_us": 6.0 } } ] } ] })";

}  // namespace

TEST_CASE("same node: up to the node switch and down, latency = intra_node.latency_us") {
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  const auto& route = cluster.route(1, 6);
  CHECK(link_names(cluster, route) ==
        std::vector<std::string>{"dc-a/dgx0/gpu1->switch", "dc-a/dgx0/switch->gpu6"});
  for (const LinkId id : route) CHECK(cluster.links()[id].link_class == LinkClass::kIntraNode);
  // The DGX H100 file sets intra_node.latency_us = 8 and 370 GB/s per direction.
  CHECK(close(8e-6, cluster.route_latency_s(1, 6)));
  CHECK(cluster.route_bottleneck_bandwidth_bytes_per_s(1, 6) == 370e9);
  CHECK(cluster.route(5, 5).empty());
}

TEST_CASE("other node, same site: NIC up to the site fabric and NIC down") {
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  CHECK(link_names(cluster, cluster.route(2, 13)) ==
        std::vector<std::string>{"dc-a/dgx0/gpu2->dc-a/fabric", "dc-a/fabric->dc-a/dgx1/gpu5"});
  // nic.latency_us + fabric.latency_us = 24 + 0 us in the shipped file.
  CHECK(close(24e-6, cluster.route_latency_s(2, 13)));
  CHECK(cluster.route_bottleneck_bandwidth_bytes_per_s(2, 13) == 400e9 / 8);
  CHECK(cluster.route_egress_usd_per_byte(2, 13) == 0.0);
}

TEST_CASE("a node's NIC uplinks have consecutive ids, and so do its NIC downlinks") {
  // A transfer between two workers' GPUs crosses the NIC uplinks of one node's GPUs and the NIC
  // downlinks of another's: numbered in a row, the network's 16-byte entries per link for them
  // lie four to a cache line (topologies/cluster_builder.cpp).
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  const int node = 1;
  const hetsim::GpuId first = cluster.first_gpu_of_node(node);
  const int gpus = cluster.gpus_in_node(node);
  REQUIRE(gpus == 8);
  const hetsim::GpuId elsewhere = cluster.first_gpu_of_node(0);
  const LinkId first_up = cluster.route(first, elsewhere).front();
  const LinkId first_down = cluster.route(elsewhere, first).back();
  for (int g = 0; g < gpus; ++g) {
    const std::span<const LinkId> out = cluster.route(first + g, elsewhere);
    const std::span<const LinkId> in = cluster.route(elsewhere, first + g);
    CHECK(cluster.links()[out.front()].link_class == LinkClass::kNic);
    CHECK(out.front() == first_up + g);
    CHECK(in.back() == first_down + g);
  }
}

TEST_CASE("route latency splits fabric and NIC latencies as documented") {
  const std::string path = write_scratch_file("two-groups.json", kTwoGroupSite);
  const Cluster cluster = load_cluster(path, kGpuTypes);
  REQUIRE(cluster.gpu_count() == 10);
  CHECK(cluster.node_name(2) == "dc/slow0");
  CHECK(cluster.gpu(8).gpu_type == "a100-80gb");
  // Same node: intra_node.latency_us = 3 us.
  CHECK(close(3e-6, cluster.route_latency_s(8, 9)));
  // Same group, other node: nic + fabric = 2 + 1 = 3 us.
  CHECK(close(3e-6, cluster.route_latency_s(0, 4)));
  // Across groups: (nic_a + fabric)/2 + (nic_b + fabric)/2 = (2 + 1)/2 + (6 + 1)/2 = 5 us.
  CHECK(close(5e-6, cluster.route_latency_s(0, 8)));
  CHECK(close(5e-6, cluster.route_latency_s(9, 3)));
  // The bottleneck is the slower NIC: 200 Gbit/s = 25e9 B/s.
  CHECK(cluster.route_bottleneck_bandwidth_bytes_per_s(0, 8) == 25e9);
}

TEST_CASE("cross-site: NIC up, the WAN link, NIC down; closed form L + S/B for one transfer") {
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  const auto& route = cluster.route(3, 29);
  CHECK(link_names(cluster, route) ==
        std::vector<std::string>{"dc-a/dgx0/gpu3->dc-a/fabric", "dc-a->dc-b",
                                 "dc-b/fabric->dc-b/dgx1/gpu5"});
  CHECK(cluster.links()[route[1]].link_class == LinkClass::kWan);
  // Latency = nic + fabric (24 us) + WAN one-way (20 ms); bottleneck = 100 Gbit/s = 12.5e9 B/s.
  const double latency_s = 24e-6 + 20e-3;
  const double bandwidth = 100e9 / 8;
  CHECK(close(latency_s, cluster.route_latency_s(3, 29)));
  CHECK(cluster.route_bottleneck_bandwidth_bytes_per_s(3, 29) == bandwidth);
  // Time to move S bytes alone on an idle route: L + S/B (the alpha-beta model). S = 1 GiB:
  // 0.020024 s + 1073741824 / 12.5e9 s = 0.1059233459 s.
  const double bytes = 1024.0 * 1024 * 1024;
  const double expected_s = 0.020024 + 1073741824.0 / 12.5e9;
  const double actual_s =
      cluster.route_latency_s(3, 29) + bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(3, 29);
  MESSAGE("1 GiB dc-a -> dc-b: expected ", expected_s, " s, actual ", actual_s, " s");
  CHECK(close(expected_s, actual_s));
  // Egress: USD 0.02 per GB (1e9 B) on the WAN link only.
  CHECK(close(0.02 / 1e9, cluster.route_egress_usd_per_byte(3, 29)));
  // The way back uses the other direction of the WAN link.
  CHECK(link_names(cluster, cluster.route(29, 3))[1] == "dc-b->dc-a");
}

TEST_CASE("routes are cached: the same links come back, and they equal a fresh composition") {
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  const std::span<const LinkId> first = cluster.route(0, 20);
  const std::vector<LinkId> copy(first.begin(), first.end());
  const std::span<const LinkId> second = cluster.route(0, 20);
  CHECK(first.data() == second.data());
  CHECK(std::ranges::equal(second, copy));
  // Filling the cache with every other pair leaves earlier spans valid and unchanged.
  for (int a = 0; a < cluster.gpu_count(); ++a)
    for (int b = 0; b < cluster.gpu_count(); ++b) (void)cluster.route(a, b);
  CHECK(cluster.route(0, 20).data() == first.data());
  CHECK(std::ranges::equal(first, copy));
  CHECK(composed_route(cluster, 0, 20) == copy);
}

TEST_CASE("cached routes stay valid when the cache's links fill several blocks") {
  const Cluster cluster = load_cluster(shipped_cluster("dgx-h100-128node.json"), kGpuTypes);
  const std::span<const LinkId> first = cluster.route(0, 1000);
  const std::vector<LinkId> copy(first.begin(), first.end());
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < cluster.gpu_count(); ++b) (void)cluster.route(a, b);
  REQUIRE(cluster.impl().route_links.blocks() > 1);
  CHECK(cluster.route(0, 1000).data() == first.data());
  CHECK(std::ranges::equal(first, copy));
  CHECK(composed_route(cluster, 0, 1000) == copy);
  for (int b = 0; b < cluster.gpu_count(); b += 97)
    CHECK(std::ranges::equal(cluster.route(15, b), composed_route(cluster, 15, b)));
}

TEST_CASE("the route table finds every pair it stored, as it grows, and no pair it did not") {
  // Keys of GPU pairs that differ only in the source, only in the destination, or in both: the
  // hash must separate all three, and growing past the first table must keep every entry.
  hetsim::RouteTable table;
  const LinkId links[] = {3, 1, 4, 1, 5, 9, 2, 6};
  std::vector<std::uint64_t> keys;
  for (int from = 0; from < 300; ++from)
    for (int to = 0; to < 300; to += 7)
      if (from != to) keys.push_back(hetsim::ordered_pair_key(from, to));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(table.find(keys[i]) == nullptr);
    table.insert(keys[i], {links + i % 8, static_cast<std::uint32_t>(i % 8)});
  }
  CHECK(table.size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const hetsim::StoredRoute* stored = table.find(keys[i]);
    REQUIRE(stored != nullptr);
    CHECK(stored->links == links + i % 8);
    CHECK(stored->length == i % 8);
  }
  CHECK(table.find(hetsim::ordered_pair_key(5, 5)) == nullptr);
  CHECK(table.find(hetsim::ordered_pair_key(0, 3)) == nullptr);  // to = 3 was never stored
  CHECK(table.find(hetsim::ordered_pair_key(300, 0)) == nullptr);
}

TEST_CASE("every route is a path of the fabric graph that never passes through a GPU") {
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  const auto& impl = cluster.impl();
  for (int a = 0; a < cluster.gpu_count(); ++a) {
    for (int b = 0; b < cluster.gpu_count(); ++b) {
      if (a == b) continue;
      CAPTURE(a);
      CAPTURE(b);
      const auto& route = cluster.route(a, b);
      REQUIRE(!route.empty());
      CHECK(impl.link_from_vertex[route.front()] == a);
      CHECK(impl.link_to_vertex[route.back()] == b);
      for (std::size_t i = 0; i + 1 < route.size(); ++i) {
        const int via = impl.link_to_vertex[route[i]];
        CHECK(via == impl.link_from_vertex[route[i + 1]]);
        CHECK(via >= cluster.gpu_count());  // switches only
      }
    }
  }
}

TEST_CASE("a GPU id out of range is an error, not undefined behaviour") {
  const Cluster cluster = load_cluster(shipped_cluster("dgx-a100-1node.json"), kGpuTypes);
  CHECK_THROWS_WITH_AS(cluster.route(0, 8), "cluster \"dgx-a100-1node\": GPU id 8 out of range 0..7",
                       hetsim::Error);
}

TEST_CASE("link classes print as the names reports use") {
  CHECK(std::string(hetsim::to_string(LinkClass::kIntraNode)) == "intra_node");
  CHECK(std::string(hetsim::to_string(LinkClass::kNic)) == "nic");
  CHECK(std::string(hetsim::to_string(LinkClass::kWan)) == "wan");
}

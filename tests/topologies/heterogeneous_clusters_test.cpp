// The shipped heterogeneous clusters: mixed-a100-h100.json (A100 and H100 nodes on one fabric)
// and three-site.json (two H100 sites and an RTX 4090 site on WAN links) load with the GPU types,
// sites and route figures their files give.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/cluster_loader.hpp"

using hetsim::Cluster;
using hetsim::load_cluster;
using hetsim::test::shipped_cluster;

namespace {
const std::vector<std::string> kTypes = {"h100-sxm", "a100-80gb", "rtx-4090"};
}

TEST_CASE("mixed-a100-h100: GPUs 0-15 are A100, 16-31 H100, on one site") {
  const Cluster c = load_cluster(shipped_cluster("mixed-a100-h100.json"), kTypes);
  CHECK(c.name() == "mixed-a100-h100");
  CHECK(c.gpu_count() == 32);
  CHECK(c.node_count() == 4);
  CHECK(c.sites().size() == 1);
  for (int g = 0; g < 32; ++g) {
    CAPTURE(g);
    CHECK(c.gpu(g).gpu_type == (g < 16 ? "a100-80gb" : "h100-sxm"));
  }
  // NVLink 3 (230 GB/s per direction, NCCL's achievable figure) on the A100 nodes, NVLink 4
  // (370 GB/s) on the H100 nodes.
  CHECK(c.intra_node_bandwidth_bytes_per_s(0) == 230e9);
  CHECK(c.intra_node_bandwidth_bytes_per_s(16) == 370e9);
  // A100 node to H100 node: the HDR NIC (200 Gbit/s = 25e9 B/s) is the bottleneck; latency
  // (24 + 0)/2 + (24 + 0)/2 us with the fabric share 0 (topologies/README.md, Routes).
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(0, 16) == 25e9);
  CHECK(c.route_latency_s(0, 16) == doctest::Approx(24e-6).epsilon(1e-12));
  CHECK(c.route_egress_usd_per_byte(0, 16) == 0);
  // Four directed links per GPU (two NVLink, two NIC), no fabric uplinks, no WAN.
  CHECK(c.links().size() == 4u * 32u);
}

TEST_CASE("three-site: two H100 sites and an RTX 4090 site, joined directly by WAN links") {
  const Cluster c = load_cluster(shipped_cluster("three-site.json"), kTypes);
  CHECK(c.name() == "three-site");
  CHECK(c.gpu_count() == 48);
  CHECK(c.node_count() == 6);
  REQUIRE(c.sites().size() == 3);
  CHECK(c.sites()[2].name == "dc-c");
  for (int g = 0; g < 48; ++g) {
    CAPTURE(g);
    CHECK(c.gpu(g).site == g / 16);
    CHECK(c.gpu(g).gpu_type == (g < 32 ? "h100-sxm" : "rtx-4090"));
  }
  // PCIe Gen 4 x16 inside an RTX 4090 node: 32 GB/s per direction.
  CHECK(c.intra_node_bandwidth_bytes_per_s(32) == 32e9);
  // dc-a to dc-b: 100 Gbit/s = 12.5e9 B/s, 20 ms + the two NIC halves (12 + 12 us), USD 0.02/GB.
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(0, 16) == 12.5e9);
  CHECK(c.route_latency_s(0, 16) == doctest::Approx(20e-3 + 24e-6).epsilon(1e-12));
  CHECK(c.route_egress_usd_per_byte(0, 16) == doctest::Approx(0.02e-9).epsilon(1e-12));
  // dc-a to dc-c and dc-b to dc-c: 10 Gbit/s = 1.25e9 B/s, 40 and 50 ms on the direct links
  // (the detour through the third site is longer: 20 + 50 and 20 + 40 ms), one egress charge.
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(0, 32) == 1.25e9);
  CHECK(c.route_latency_s(0, 32) == doctest::Approx(40e-3 + 24e-6).epsilon(1e-12));
  CHECK(c.route_latency_s(16, 47) == doctest::Approx(50e-3 + 24e-6).epsilon(1e-12));
  CHECK(c.route_egress_usd_per_byte(16, 47) == doctest::Approx(0.02e-9).epsilon(1e-12));
  // Between the two RTX 4090 nodes: the 100GbE port (12.5e9 B/s), which the node's uplink into
  // the oversubscribed fabric (8 GPUs x 100 Gbit/s / 8) matches.
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(32, 40) == 12.5e9);
  // Four directed links per GPU, an uplink and a downlink per dc-c node, two per WAN link.
  CHECK(c.links().size() == 4u * 48u + 2u * 2u + 3u * 2u);
}

// The shipped clusters load, with the GPU and node counts their names promise and GPU ids laid
// out node by node.
#include <doctest/doctest.h>

#include "topologies/cluster_loader.hpp"
#include "tests/topologies/cluster_test_support.hpp"

using hetsim::Cluster;
using hetsim::load_cluster;
using hetsim::test::kGpuTypes;
using hetsim::test::shipped_cluster;

TEST_CASE("every shipped cluster loads with its GPU, node and site counts") {
  struct Expected {
    const char* file;
    int gpus;
    int nodes;
    int sites;
    const char* gpu_type;
  };
  const Expected cases[] = {
      {"dgx-h100-4node.json", 32, 4, 1, "h100-sxm"},
      {"two-site-wan.json", 32, 4, 2, "h100-sxm"},
      {"dgx-h100-128node.json", 1024, 128, 1, "h100-sxm"},
      {"dgx-h100-2048node.json", 16384, 2048, 1, "h100-sxm"},
      {"dgx-a100-1node.json", 8, 1, 1, "a100-80gb"},
      {"dgx-a100-2node.json", 16, 2, 1, "a100-80gb"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const Cluster cluster = load_cluster(shipped_cluster(c.file), kGpuTypes);
    CHECK(cluster.gpu_count() == c.gpus);
    CHECK(cluster.node_count() == c.nodes);
    CHECK(static_cast<int>(cluster.sites().size()) == c.sites);
    CHECK(cluster.gpu(c.gpus - 1).gpu_type == c.gpu_type);
    CHECK(cluster.source_file() == shipped_cluster(c.file));
    // Four directed links per GPU (two NVLink, two NIC) plus two per WAN link.
    CHECK(cluster.links().size() == static_cast<std::size_t>(4 * c.gpus + (c.sites - 1) * 2));
  }
}

TEST_CASE("GPU ids go site by site, node by node, GPU by GPU") {
  const Cluster cluster = load_cluster(shipped_cluster("two-site-wan.json"), kGpuTypes);
  CHECK(cluster.name() == "two-site-wan");
  for (int id = 0; id < cluster.gpu_count(); ++id) {
    CAPTURE(id);
    CHECK(cluster.gpu(id).node == id / 8);
    CHECK(cluster.gpu(id).local_index == id % 8);
    CHECK(cluster.gpu(id).site == id / 16);
  }
  CHECK(cluster.node_name(3) == "dc-b/dgx1");
  CHECK(cluster.first_gpu_of_node(3) == 24);
  CHECK(cluster.gpus_in_node(3) == 8);
  CHECK(cluster.sites()[1].name == "dc-b");
}

TEST_CASE("intra-node figures are the node group's: 370 GB/s and 8 us on DGX H100") {
  const Cluster cluster = load_cluster(shipped_cluster("dgx-h100-4node.json"), kGpuTypes);
  // 370 GB/s per direction: NCCL's effective NVLink 4 rate (450 GB/s line rate less about 20%
  // protocol overhead), 1 GB = 1e9 B.
  CHECK(cluster.intra_node_bandwidth_bytes_per_s(17) == 370e9);
  CHECK(cluster.intra_node_latency_s(17) == doctest::Approx(8e-6).epsilon(1e-12));
  const Cluster a100 = load_cluster(shipped_cluster("dgx-a100-1node.json"), kGpuTypes);
  CHECK(a100.intra_node_bandwidth_bytes_per_s(0) == 230e9);
}

// A serving replica's tensor-parallel all-reduces run on the ring of its group's GPUs: NVLink
// inside a node, the NICs when the group spans nodes (tp 16 on two 8-GPU nodes), as in training.
#include <doctest/doctest.h>

#include "serving_test_support.hpp"
#include "sim/serving/serving_run.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;

TEST_CASE("a tensor-parallel group spanning two nodes all-reduces at the NICs' speed, not NVLink's") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-2node.json");
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  // The ring through GPUs 0..15 crosses the fabric from GPU 7 to 8 and from 15 back to 0, each
  // NIC link once: its bottleneck is one NIC route's bandwidth, its slowest hop that route's.
  StageHardware across_nodes;
  across_nodes.gpu = &catalog().at("a100-80gb");
  across_nodes.tp_links = {cluster.route_bottleneck_bandwidth_bytes_per_s(7, 8), cluster.route_latency_s(7, 8)};
  StageHardware within_node = across_nodes;
  within_node.tp_links = {cluster.intra_node_bandwidth_bytes_per_s(0), cluster.intra_node_latency_s(0)};
  IterationWork prefill;
  prefill.add_prefill(100, 0, true);
  const double expected = ReplicaCost(model, Dtype::kBf16, 16, {across_nodes}).iteration_seconds(prefill);
  const double on_nvlink = ReplicaCost(model, Dtype::kBf16, 16, {within_node}).iteration_seconds(prefill);

  ServingOptions options;
  options.tp = 16;
  options.replicas = 1;
  const ServingResult r = simulate_serving(cluster, catalog(), model, {{0.0, 100, 1}}, options);
  CHECK(r.requests[0].first_token_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(expected > on_nvlink);
}

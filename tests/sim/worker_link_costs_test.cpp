// Chunk costs are shared between workers that would compute them alike. Two nodes of one GPU type
// need not be alike: a node group with slower NVLink pays more for its tensor-parallel
// all-reduces. Each worker must be costed on its own links, whatever order the cluster file
// lists its node groups in, both in the replay and in --balance-layers' partitioner.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
using test::shipped_catalog;

constexpr double kFastNvlinkGBps = 370;
constexpr double kSlowNvlinkGBps = 40;

// One site of 8-GPU H100 nodes, one node per entry of `nvlink_GBps`, with that NVLink bandwidth.
Cluster nodes_with_nvlink(const std::string& name, const std::vector<double>& nvlink_GBps) {
  std::vector<test::TestNodeGroup> groups;
  for (double bandwidth : nvlink_GBps) {
    test::TestNodeGroup node;
    node.gpu = "h100-sxm";
    node.nvlink_GBps = bandwidth;
    groups.push_back(node);
  }
  return test::one_site_cluster(name, groups);
}

RunOptions tp8(int pp, int gbs) {
  RunOptions o;
  o.plan.tp = 8;
  o.plan.pp = pp;
  o.plan.micro_batch_size = 1;
  o.plan.global_batch_size = gbs;
  o.plan.seq_length = 4096;
  return o;
}

RunResult run(const Cluster& cluster, const RunOptions& options) {
  return simulate_training(cluster, shipped_catalog(), test::shipped_model("llama-3-8b"), options);
}
}  // namespace

TEST_CASE("a replica on slower NVLink computes at its own speed, whichever node the file lists first") {
  // tp 8 x pp 1 x dp 2: one replica per node. The replicas' gradients are reduced together, so
  // the iteration waits for the slower one wherever it is listed.
  const RunOptions options = tp8(1, 16);
  const double fast_first =
      run(nodes_with_nvlink("fast_then_slow", {kFastNvlinkGBps, kSlowNvlinkGBps}), options).iteration_time_s;
  const double slow_first =
      run(nodes_with_nvlink("slow_then_fast", {kSlowNvlinkGBps, kFastNvlinkGBps}), options).iteration_time_s;
  const double both_fast =
      run(nodes_with_nvlink("fast_and_fast", {kFastNvlinkGBps, kFastNvlinkGBps}), options).iteration_time_s;
  CHECK(fast_first == doctest::Approx(slow_first).epsilon(1e-12));
  // Llama-3-8B's tensor-parallel all-reduces at a ninth of the bandwidth: well over 10% slower.
  CHECK(fast_first > 1.1 * both_fast);
}

TEST_CASE("--balance-layers weighs a stage by its slowest replica's links, not its first's") {
  // tp 8 x pp 2 x dp 2 on four nodes in Megatron's order (pipeline outermost): rank 0 on nodes 0
  // and 1, rank 1 on nodes 2 and 3, replica 0 on nodes 0 and 2. Slow NVLink on either of rank 1's
  // nodes makes it the slower stage, which the partitioner then gives fewer layers than on four
  // fast nodes.
  RunOptions options = tp8(2, 16);
  options.balance_layers = true;
  const double f = kFastNvlinkGBps;
  const double s = kSlowNvlinkGBps;
  const RunResult slow_in_replica_0 = run(nodes_with_nvlink("slow_node_2", {f, f, s, f}), options);
  const RunResult slow_in_replica_1 = run(nodes_with_nvlink("slow_node_3", {f, f, f, s}), options);
  const RunResult all_fast = run(nodes_with_nvlink("four_fast", {f, f, f, f}), options);
  CHECK(slow_in_replica_0.layers_per_stage == slow_in_replica_1.layers_per_stage);
  REQUIRE(slow_in_replica_1.layers_per_stage.size() == 2);
  REQUIRE(all_fast.layers_per_stage.size() == 2);
  CHECK(slow_in_replica_1.layers_per_stage[1] < all_fast.layers_per_stage[1]);
}

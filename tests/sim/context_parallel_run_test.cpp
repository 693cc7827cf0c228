// Context parallelism through a whole run: Megatron's rank order tp-cp-ep-dp-pp places a cp group
// on cp consecutive tensor-parallel groups; the ring's steps on a 2-GPU NVLink pair last
// max(attention on one block, one block's transfer) on that pair's route; gradients reduce over
// dp x cp GPUs; activations per GPU shrink by cp; plans the replay cannot honour are refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/error.hpp"
#include "models/context_parallel.hpp"
#include "models/gpu_catalog.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "models/transformer_config.hpp"
#include "sim/data_parallel_sync.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
using test::shipped_catalog;
const Cluster& dgx_h100_4node() { return test::shipped_cluster("dgx-h100-4node"); }

// Two H200s joined by NVLink, nothing else: the ring's only route.
const Cluster& nvlink_pair() {
  static const Cluster c = test::one_group_cluster("nvlink-pair", "h200", 1, 2, 450, 400);
  return c;
}

const TransformerConfig& llama3_8b() { return test::shipped_model("llama-3-8b"); }

RunOptions options(int tp, int cp, int pp, int seq, int gbs) {
  RunOptions o;
  o.plan.tp = tp;
  o.plan.cp = cp;
  o.plan.pp = pp;
  o.plan.seq_length = seq;
  o.plan.global_batch_size = gbs;
  o.plan.flash_attention = true;
  return o;
}

std::string plan_error(const Cluster& cluster, const RunOptions& o) {
  try {
    simulate_training(cluster, shipped_catalog(), llama3_8b(), o);
  } catch (const PlanError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("Megatron's rank order tp-cp-ep-dp-pp: a cp group is cp consecutive tp groups") {
  Placement p{2, 2, 2};
  p.cp = 2;
  // global rank = t + tp (c + cp (replica + dp rank))
  CHECK(p.worker_gpus(0) == std::vector<int>{0, 1, 2, 3});    // replica 0, rank 0
  CHECK(p.worker_gpus(2) == std::vector<int>{4, 5, 6, 7});    // replica 1, rank 0
  CHECK(p.worker_gpus(1) == std::vector<int>{8, 9, 10, 11});  // replica 0, rank 1
  CHECK(p.tensor_parallel_gpus(0, 1) == std::vector<int>{2, 3});
  CHECK(p.context_parallel_gpus(0, 1) == std::vector<int>{1, 3});
  // The data-parallel group with context parallelism: dp x cp GPUs of one tp index.
  CHECK(p.data_parallel_gpus(0, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(p.data_parallel_gpus(1, 1) == std::vector<int>{9, 11, 13, 15});
}

TEST_CASE("ring step = max(attention on one block, transfer) on a 2-GPU NVLink pair") {
  const Cluster& pair = nvlink_pair();
  const double bandwidth = pair.route_bottleneck_bandwidth_bytes_per_s(0, 1);
  const double latency = pair.route_latency_s(0, 1);
  CHECK(bandwidth == 450e9);
  const TransformerConfig& m = llama3_8b();
  const GpuSpec& h200 = shipped_catalog().at("h200");
  // Short sequences leave the NVLink transfer exposed; long ones hide it behind the attention.
  for (const int seq : {1024, 131072}) {
    const RunOptions o = options(1, 2, 1, seq, 1);
    const RunResult r = simulate_training(pair, shipped_catalog(), m, o);
    ParallelPlan plan = o.plan;
    plan.dp = 1;
    const auto ops = transformer_layer_ops(m, plan);
    const auto costs = cost_ops(ops, h200, plan.dtype, nullptr);
    double core_f = 0, core_b = 0;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].attention_core) {
        core_f += costs[i].forward.seconds;
        core_b += costs[i].backward_input.seconds;
      }
    const double block = context_parallel_kv_block_bytes(m, plan);
    const double step_f = std::max(core_f / 2, latency + block / bandwidth);
    const double step_b = std::max(core_b / 2, latency + 2 * block / bandwidth);
    const double exposed = m.num_layers * (core_f / 2 + step_f - core_f + core_b / 2 + step_b - core_b);
    std::printf("llama-3-8b seq %d on an NVLink pair, cp 2: attention step %.3g s vs block transfer %.3g s; "
                "ring exposed %.6g s per iteration (expected %.6g)\n",
                seq, core_f / 2, latency + block / bandwidth, r.context_parallel_exposed_s_per_rank[0], exposed);
    CHECK(std::abs(r.context_parallel_exposed_s_per_rank[0] - exposed) <= 1e-12 * exposed);
    if (seq == 1024) CHECK(exposed > 0);
    if (seq == 131072) CHECK(exposed == 0);
    // Each GPU sends one K,V block forward and K,V plus dK,dV backward per layer, on NVLink.
    const double ring_bytes = 2 * m.num_layers * (block + 2 * block);
    CHECK(r.context_parallel_bytes == ring_bytes);
    CHECK(r.bytes_nic == 0);
    // The pair also reduces its gradients (dp 1 x cp 2), as two data-parallel replicas of the
    // same GPUs would: what the cp run adds to their link bytes is the ring's, on every link of
    // the route between the two GPUs.
    const RunResult replicas = simulate_training(pair, shipped_catalog(), m, options(1, 1, 1, seq, 2));
    REQUIRE(replicas.plan.dp == 2);
    const double hops = static_cast<double>(pair.route(0, 1).size());
    CHECK(pair.route(1, 0).size() == pair.route(0, 1).size());
    CHECK(r.bytes_intra_node - replicas.bytes_intra_node == doctest::Approx(ring_bytes * hops).epsilon(1e-9));
  }
}

TEST_CASE("gradients reduce over the dp x cp GPUs holding the same weights") {
  ParallelPlan plan;
  plan.tp = 1;
  plan.dp = 2;
  plan.cp = 2;
  ChunkCost cost;
  cost.params = 1e8;
  cost.layers = 1;
  Placement placement{1, 1, 2};
  placement.cp = 2;
  const std::vector<std::vector<ChunkCost>> costs(2, {cost});
  const auto sync = data_parallel_sync(dgx_h100_4node(), plan, placement, costs, {});
  REQUIRE(sync.size() == 1);
  REQUIRE(!sync[0].groups[0].empty());
  for (const RingHops& channel : sync[0].groups[0]) CHECK(channel.size() == 4);  // a hop per GPU of dp x cp
  REQUIRE(!sync[0].gradients.empty());
  // The same reduction as four data-parallel replicas without context parallelism.
  ParallelPlan replicas = plan;
  replicas.dp = 4;
  replicas.cp = 1;
  const auto four = data_parallel_sync(dgx_h100_4node(), replicas, Placement{1, 1, 4}, costs, {});
  CHECK(sync[0].gradients.front().alpha_beta_s == four[0].gradients.front().alpha_beta_s);
  CHECK(sync[0].gradients.front().bytes == four[0].gradients.front().bytes);
}

TEST_CASE("cp 2 on 4 DGX H100 nodes: half the activations, dp halves, the ring on NVLink") {
  const RunResult one = simulate_training(dgx_h100_4node(), shipped_catalog(), llama3_8b(), options(4, 1, 2, 16384, 16));
  const RunResult two = simulate_training(dgx_h100_4node(), shipped_catalog(), llama3_8b(), options(4, 2, 2, 16384, 16));
  CHECK(one.plan.dp == 4);
  CHECK(two.plan.dp == 2);
  CHECK(two.tokens_per_iteration == one.tokens_per_iteration);
  CHECK(two.plan.microbatches() == 2 * one.plan.microbatches());
  // tp 4 x cp 2 fills a node: the ring never leaves NVLink.
  CHECK(two.context_parallel_bytes > 0);
  CHECK(two.bytes_nic < one.bytes_nic + 1);
  const auto activations = [](const RunResult& r) {
    double most = 0;
    for (const GpuMemory& m : r.memory) most = std::max(most, m.activation_bytes);
    return most;
  };
  std::printf("llama-3-8b seq 16k gbs 16: cp 1 %.4f s, %.2f GiB activations; cp 2 %.4f s, %.2f GiB\n",
              one.iteration_time_s, activations(one) / (1 << 30), two.iteration_time_s,
              activations(two) / (1 << 30));
  // 1F1B keeps up to pp microbatches on rank 0 in both; each holds half the tokens with cp 2,
  // plus the ring's buffers in the backward.
  CHECK(activations(two) < 0.6 * activations(one));
  CHECK(one.context_parallel_exposed_s_per_rank.empty());
}

TEST_CASE("context-parallel plans the run cannot take are refused, naming the flag") {
  const Cluster& c = dgx_h100_4node();
  CHECK(plan_error(c, options(4, 0, 2, 8192, 16)) == "--context-parallel-size 0 must be >= 1");
  CHECK(plan_error(c, options(4, 3, 2, 8192, 16)) ==
        "--seq-length 8192 is not divisible by 2 x context-parallel size 3 = 6 (causal load balancing "
        "gives each context-parallel rank two of 2 x cp equal chunks of every sequence)");
  CHECK(plan_error(c, options(4, 3, 2, 8196, 16)) ==
        "tp 4 x cp 3 x pp 2 = 24 does not divide the cluster's 32 GPUs, so tp*cp*pp*dp cannot equal the GPU count");
  RunOptions split = options(4, 2, 2, 8192, 16);
  split.sequence_splits = 2;
  split.schedule = "seq1f1b";
  CHECK(plan_error(c, split) ==
        "--seq-splits 2 with --context-parallel-size 2: Seq1F1B's sequence segments over a "
        "context-parallel ring are not modelled; use one of them");
  RunOptions site = options(4, 2, 2, 8192, 16);
  site.site_placement = true;
  CHECK(plan_error(c, site) ==
        "--placement site-aware lays out tp x pp x dp plans; it does not place context-parallel groups "
        "(--context-parallel-size 2): use --placement megatron");
}

TEST_CASE("context parallelism with expert parallelism is refused") {
  const TransformerConfig& mixtral = test::shipped_model("mixtral-8x7b");
  RunOptions o = options(2, 2, 2, 4096, 64);
  o.plan.ep = 2;
  try {
    simulate_training(dgx_h100_4node(), shipped_catalog(), mixtral, o);
    FAIL("no error");
  } catch (const PlanError& e) {
    CHECK(std::string(e.what()) ==
          "--context-parallel-size 2 with --expert-model-parallel-size 2: expert-parallel groups across "
          "context-parallel ranks are not modelled; use ep 1 or cp 1");
  }
}

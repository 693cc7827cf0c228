// Context parallelism in the cost model (models/context_parallel.hpp), Megatron-core with
// Transformer Engine's ring attention (AttnFuncWithCPAndKVP2P) and causal load balancing
// (get_batch_on_this_cp_rank: 2cp chunks, rank i keeps i and 2cp-1-i). Closed forms, per layer
// and microbatch on one GPU of a cp group, for a sequence of S tokens:
//   linear layers, norms, activations: S/cp tokens;
//   attention core FLOPs: 1/cp of the whole sequence's;
//   K,V block: 2 b (S/cp) kv d e / t bytes; a ring pass of cp steps, cp-1 of them beside a
//   transfer (latency + block / bandwidth): core/cp + (cp-1) max(core/cp, transfer);
//   the backward ring carries K,V and dK,dV: twice the bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "base/error.hpp"
#include "models/chunk_cost.hpp"
#include "models/context_parallel.hpp"
#include "models/layer_ops.hpp"
#include "models/op_cost.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::rel;
using hetsim::test::unit_gpu;

// Llama-3-8B: 32 query heads, 8 kv heads of 128, hidden 4096.
hetsim::TransformerConfig llama3_8b() {
  return hetsim::load_transformer_config(hetsim::test::config_path("llama-3-8b"));
}

hetsim::ParallelPlan plan_of(int cp, bool flash, int tp = 1) {
  hetsim::ParallelPlan plan;
  plan.tp = tp;
  plan.cp = cp;
  plan.seq_length = 32768;
  plan.micro_batch_size = 1;
  plan.flash_attention = flash;
  return plan;
}

struct LayerFlops {
  double attention = 0;  // attention core, forward + backward
  double other = 0;
};

LayerFlops layer_flops(const hetsim::TransformerConfig& m, const hetsim::ParallelPlan& plan) {
  LayerFlops f;
  for (const auto& op : hetsim::transformer_layer_ops(m, plan)) {
    const double flops = op.forward.flops + op.backward_input.flops + op.backward_weight.flops;
    (op.attention_core ? f.attention : f.other) += flops;
  }
  return f;
}

// The attention core's roofline seconds of one layer on the unit GPU, forward and backward.
std::pair<double, double> core_seconds(const hetsim::TransformerConfig& m, const hetsim::ParallelPlan& plan) {
  const auto ops = hetsim::transformer_layer_ops(m, plan);
  const auto costs = hetsim::cost_ops(ops, unit_gpu(), plan.dtype, nullptr);
  double forward = 0, backward = 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].attention_core) {
      forward += costs[i].forward.seconds;
      backward += costs[i].backward_input.seconds;
    }
  return {forward, backward};
}

std::string plan_error(const hetsim::ParallelPlan& plan) {
  try {
    hetsim::check_context_parallel(plan);
  } catch (const hetsim::PlanError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("load-balanced context parallelism gives each rank 1/cp of the attention and linear FLOPs") {
  const auto m = llama3_8b();
  for (const bool flash : {false, true}) {
    const LayerFlops whole = layer_flops(m, plan_of(1, flash));
    for (const int cp : {2, 4, 8}) {
      const LayerFlops rank = layer_flops(m, plan_of(cp, flash));
      std::printf("flash %d cp %d: attention %.6g of %.6g FLOPs per rank (1/cp: %.6g)\n", flash, cp,
                  rank.attention, whole.attention, whole.attention / cp);
      CHECK(rel(rank.attention, whole.attention / cp) < 1e-12);
      CHECK(rel(rank.other, whole.other / cp) < 1e-12);
    }
  }
  // MFU's numerator counts the whole sequence whatever cp is.
  hetsim::ParallelPlan four = plan_of(4, true);
  four.global_batch_size = 8;
  CHECK(hetsim::model_flops_per_iteration(m, four) ==
        hetsim::model_flops_per_iteration(m, [&] { auto p = four; p.cp = 1; return p; }()));
}

TEST_CASE("activation memory per GPU divides by cp") {
  const auto m = llama3_8b();
  for (const auto recompute : {hetsim::Recompute::kNone, hetsim::Recompute::kSelective, hetsim::Recompute::kFull})
    for (const bool flash : {false, true}) {
      hetsim::ParallelPlan one = plan_of(1, flash, 2);
      one.recompute = recompute;
      one.sequence_parallel = true;
      const double whole = hetsim::layer_activation_bytes(m, one);
      for (const int cp : {2, 4}) {
        hetsim::ParallelPlan split = one;
        split.cp = cp;
        CHECK(rel(hetsim::layer_activation_bytes(m, split), whole / cp) < 1e-12);
      }
    }
}

TEST_CASE("a ring step lasts max(attention on one block, one block's transfer)") {
  const hetsim::ContextParallelLinks links{100e9, 2e-6};
  // Transfer-bound: 4 steps of 1 ms compute, 3 transfers of 2e-6 + 1e9 / 1e11 = 10.002 ms.
  const hetsim::RingPass slow = hetsim::ring_attention_pass(4e-3, 1e9, 4, links);
  CHECK(rel(slow.seconds, 1e-3 + 3 * (2e-6 + 1e-2)) < 1e-12);
  CHECK(rel(slow.exposed_s, slow.seconds - 4e-3) < 1e-12);
  CHECK(slow.bytes_sent == 3e9);
  // Compute-bound: the transfers hide entirely.
  const hetsim::RingPass hidden = hetsim::ring_attention_pass(4e-3, 1e6, 4, links);
  CHECK(rel(hidden.seconds, 4e-3) < 1e-12);
  CHECK(hidden.exposed_s < 1e-15);
  // cp 1: no ring.
  const hetsim::RingPass alone = hetsim::ring_attention_pass(4e-3, 1e9, 1, links);
  CHECK(alone.seconds == 4e-3);
  CHECK(alone.bytes_sent == 0);
}

TEST_CASE("a layer's ring: GQA's K,V blocks, forward and backward exposed in the chunk's times") {
  const auto m = llama3_8b();
  const hetsim::ParallelPlan plan = plan_of(4, true, 2);
  // 2 (K and V) x b 1 x 32768/4 tokens x 8 kv heads x 128 x 2 bytes / tp 2.
  const double block = 2.0 * 1 * 8192 * 8 * 128 * 2 / 2;
  CHECK(hetsim::context_parallel_kv_block_bytes(m, plan) == block);
  // A slow ring (1 GB/s) so the transfers show.
  const hetsim::ContextParallelLinks links{1e9, 5e-6};
  const hetsim::TensorParallelLinks tp_links{100e9, 1e-6};
  const auto [core_f, core_b] = core_seconds(m, plan);
  const double exposed_f = core_f / 4 + 3 * std::max(core_f / 4, 5e-6 + block / 1e9) - core_f;
  const double exposed_b = core_b / 4 + 3 * std::max(core_b / 4, 5e-6 + 2 * block / 1e9) - core_b;
  const hetsim::ChunkSpan span{0, 2, false, false};
  const hetsim::ChunkCost with_ring =
      hetsim::cost_chunk(m, plan, unit_gpu(), span, tp_links, hetsim::ExpertParallelLinks{}, links);
  std::printf("llama-3-8b layer, cp 4, 1 GB/s ring: exposed forward %.6g s (expected %.6g), backward %.6g s (%.6g)\n",
              with_ring.cp_comm_forward_s / 2, exposed_f, with_ring.cp_comm_backward_s / 2, exposed_b);
  CHECK(exposed_f > 0);
  CHECK(rel(with_ring.cp_comm_forward_s, 2 * exposed_f) < 1e-12);
  CHECK(rel(with_ring.cp_comm_backward_s, 2 * exposed_b) < 1e-12);
  CHECK(with_ring.cp_bytes_forward == 2 * 3 * block);
  CHECK(with_ring.cp_bytes_backward == 2 * 3 * 2 * block);
  // The same layers on a ring a thousand times faster: only the exposed transfers differ.
  const hetsim::ChunkCost fast = hetsim::cost_chunk(m, plan, unit_gpu(), span, tp_links,
                                                    hetsim::ExpertParallelLinks{},
                                                    hetsim::ContextParallelLinks{1e12, 5e-6});
  CHECK(rel(with_ring.forward_s - fast.forward_s, with_ring.cp_comm_forward_s - fast.cp_comm_forward_s) < 1e-9);
  // The backward holds two blocks in flight, each K, V, dK and dV.
  CHECK(with_ring.backward_transient_bytes == 4 * block);
  // Recomputation runs the forward ring again.
  hetsim::ParallelPlan selective = plan;
  selective.recompute = hetsim::Recompute::kSelective;
  const hetsim::ChunkCost recomputed =
      hetsim::cost_chunk(m, selective, unit_gpu(), span, tp_links, hetsim::ExpertParallelLinks{}, links);
  CHECK(rel(recomputed.recompute_s, 2 * (core_f + exposed_f)) < 1e-12);
  const auto per_microbatch = hetsim::context_parallel_per_microbatch(recomputed, selective.recompute);
  CHECK(rel(per_microbatch.exposed_s, 2 * (2 * exposed_f + exposed_b)) < 1e-12);
}

TEST_CASE("weights are replicated over cp: ZeRO shards over dp x cp") {
  hetsim::ParallelPlan plan;
  plan.dp = 2;
  plan.cp = 4;
  plan.distributed_optimizer = true;
  const hetsim::StaticMemory split = hetsim::static_memory(1e9, plan);
  // Megatron-LM's bf16 layout: 12 bytes of optimizer state per parameter over dp x cp = 8.
  CHECK(split.optimizer_bytes == 12e9 / 8);
  CHECK(split.weights_bytes == 2e9);
  CHECK(plan.data_parallel_with_context() == 8);
}

TEST_CASE("context parallelism that cannot split the sequence is refused") {
  hetsim::ParallelPlan plan = plan_of(0, true);
  CHECK(plan_error(plan) == "--context-parallel-size 0 must be >= 1");
  plan = plan_of(3, true);
  plan.seq_length = 4100;
  CHECK(plan_error(plan) ==
        "--seq-length 4100 is not divisible by 2 x context-parallel size 3 = 6 (causal load "
        "balancing gives each context-parallel rank two of 2 x cp equal chunks of every sequence)");
  plan.seq_length = 4101;
  plan.cp = 1;
  CHECK(plan_error(plan) == "(no error)");
}

TEST_CASE("cost_chunk refuses a ring without links and sliding-window attention") {
  const auto m = llama3_8b();
  const hetsim::ChunkSpan span{0, 1, false, false};
  CHECK_THROWS_WITH_AS(hetsim::cost_chunk(m, plan_of(2, true), unit_gpu(), span, {}),
                       "context parallelism 2 needs ring links with a positive bandwidth", hetsim::PlanError);
  hetsim::TransformerConfig windowed = m;
  windowed.name = "windowed";
  windowed.sliding_window = 4096;
  CHECK_THROWS_WITH_AS(
      hetsim::cost_chunk(windowed, plan_of(2, true), unit_gpu(), span, {}, {},
                         hetsim::ContextParallelLinks{1e11, 1e-6}),
      "--context-parallel-size 2: model \"windowed\" uses sliding-window attention (window 4096), "
      "which the context-parallel ring does not model; use cp 1",
      hetsim::PlanError);
}

// Tensor-parallel collective time inside cost_chunk against the ring formulas:
// all-reduce 2(t-1)/t * S/B + 2(t-1)L; all-gather / reduce-scatter (t-1)/t * S/B + (t-1)L,
// S = b*s*h*2 bytes; Megatron: 2 all-reduces per layer forward and 2 backward without SP,
// 2 all-gather + reduce-scatter pairs each way with SP.
#include <doctest/doctest.h>

#include <cmath>

#include "models/chunk_cost.hpp"
#include "models/tp_collectives.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::rel;
using hetsim::test::unit_gpu;
}  // namespace

TEST_CASE("ring formulas") {
  const hetsim::TensorParallelLinks l{100e9, 5e-6};
  CHECK(rel(hetsim::ring_all_reduce_s(1e9, 8, l), 2.0 * 7 / 8 * 1e9 / 100e9 + 2 * 7 * 5e-6) < 1e-12);
  CHECK(rel(hetsim::ring_all_gather_s(1e9, 4, l), 3.0 / 4 * 1e9 / 100e9 + 3 * 5e-6) < 1e-12);
  CHECK(hetsim::ring_reduce_scatter_s(1e9, 1, l) == 0.0);
}

TEST_CASE("cost_chunk's TP communication equals the per-layer ring collectives") {
  const auto m = hetsim::load_transformer_config(std::string(HETSIM_SOURCE_DIR) + "/models/configs/llama-2-7b.json");
  hetsim::ParallelPlan plan;
  plan.tp = 8;
  plan.seq_length = 4096;
  plan.micro_batch_size = 2;
  const hetsim::TensorParallelLinks links{300e9, 3e-6};
  const double S = 2.0 * 2 * 4096 * 4096, t = 8, B = 300e9, L = 3e-6, layers = 4;
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), {4, 4, false, false}, links);
  const double ar = 2 * (t - 1) / t * S / B + 2 * (t - 1) * L;
  MESSAGE("no SP: expected " << layers * 2 * ar << " s, actual " << c.tp_comm_forward_s << " s");
  CHECK(rel(c.tp_comm_forward_s, layers * 2 * ar) < 1e-9);
  CHECK(rel(c.tp_comm_backward_s, layers * 2 * ar) < 1e-9);
  plan.sequence_parallel = true;
  const auto sp = hetsim::cost_chunk(m, plan, unit_gpu(), {4, 4, false, false}, links);
  const double ag = (t - 1) / t * S / B + (t - 1) * L;
  CHECK(rel(sp.tp_comm_forward_s, layers * 2 * 2 * ag) < 1e-9);
  CHECK(rel(sp.tp_comm_backward_s, layers * 2 * 2 * ag) < 1e-9);
  CHECK(c.forward_s > c.tp_comm_forward_s);
  CHECK(c.output_bytes == S);
}

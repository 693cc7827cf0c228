// Tensor-parallel collectives inside cost_chunk, as Megatron-LM issues them (Korthikanti et al.
// 2022, section 4.2.2; megatron/core/tensor_parallel/layers.py,
// LinearWithGradAccumulationAndAsyncCommunication). Ring formulas: all-reduce
// 2(t-1)/t * S/B + 2(t-1)L, all-gather / reduce-scatter (t-1)/t * S/B + (t-1)L, S = b*s*h*2 bytes.
// Per layer, without SP: forward 2 all-reduces (exposed); backward 2 all-reduces of the
// column-parallel input gradients, each beside that GEMM's wgrad. With SP: forward 2 all-gathers
// + 2 reduce-scatters (exposed); backward 2 all-gathers of the output gradients (exposed), 2
// all-gathers again of the saved input shards beside the QKV / MLP-up dgrads (the "extra
// all-gather" of section 4.2.2), 2 reduce-scatters beside their wgrads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "models/roofline.hpp"
#include "models/tp_collectives.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::rel;
using hetsim::test::unit_gpu;

hetsim::TransformerConfig llama2_7b() {
  return hetsim::load_transformer_config(hetsim::test::config_path("llama-2-7b"));
}

// The roofline time of one pass of the named op of a layer.
double op_seconds(const hetsim::TransformerConfig& m, const hetsim::ParallelPlan& plan,
                  const std::string& name, bool weight_pass) {
  for (const auto& op : hetsim::transformer_layer_ops(m, plan)) {
    if (op.name != name) continue;
    return hetsim::kernel_time(op.kind, weight_pass ? op.backward_weight : op.backward_input,
                               unit_gpu(), plan.dtype);
  }
  FAIL("no op " << name);
  return 0;
}
}  // namespace

namespace {
// Llama-2-7B's layer at tp 8, micro-batch 2, 4,096 tokens: S = 2 B x 2 x 4096 x 4096.
hetsim::ParallelPlan tp8_plan() { return hetsim::test::tp_plan(8, 2, 4096); }

// The TP links of the timing tests below, and ring passes of that layer's S over 8 GPUs on them:
// all-reduce 2(t-1)/t S/B + 2(t-1)L, all-gather (t-1)/t S/B + (t-1)L.
const hetsim::TensorParallelLinks kLinks{300e9, 3e-6};
double tp8_ring_pass_s() {
  const double S = 2.0 * 2 * 4096 * 4096, t = 8;
  return (t - 1) / t * S / kLinks.bandwidth_bytes_per_s + (t - 1) * kLinks.latency_s;
}
}  // namespace

TEST_CASE("ring formulas") {
  const hetsim::TensorParallelLinks l{100e9, 5e-6};
  CHECK(rel(hetsim::ring_all_reduce_s(1e9, 8, l), 2.0 * 7 / 8 * 1e9 / 100e9 + 2 * 7 * 5e-6) < 1e-12);
  CHECK(rel(hetsim::ring_all_gather_s(1e9, 4, l), 3.0 / 4 * 1e9 / 100e9 + 3 * 5e-6) < 1e-12);
  CHECK(hetsim::ring_reduce_scatter_s(1e9, 1, l) == 0.0);
}

TEST_CASE("per-layer TP volume: 4(t-1)/t S each way without SP; 4 and 6 (t-1)/t S with SP") {
  // Bytes one GPU sends: all-reduce 2(t-1)/t S, all-gather / reduce-scatter (t-1)/t S.
  const auto m = llama2_7b();
  hetsim::ParallelPlan plan = tp8_plan();
  const hetsim::TensorParallelLinks links{300e9, 3e-6};
  const double S = 2.0 * 2 * 4096 * 4096, t = 8, layers = 4, unit = (t - 1) / t * S;
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), {4, 4, false, false}, links);
  MESSAGE("no SP: forward expected " << layers * 4 * unit << " B, actual " << c.tp_bytes_forward
                                     << " B; backward expected " << layers * 4 * unit
                                     << " B, actual " << c.tp_bytes_backward << " B");
  CHECK(rel(c.tp_bytes_forward, layers * 4 * unit) < 1e-12);
  CHECK(rel(c.tp_bytes_backward, layers * 4 * unit) < 1e-12);
  plan.sequence_parallel = true;
  const auto sp = hetsim::cost_chunk(m, plan, unit_gpu(), {4, 4, false, false}, links);
  MESSAGE("SP: forward expected " << layers * 4 * unit << " B, actual " << sp.tp_bytes_forward
                                  << " B; backward expected " << layers * 6 * unit
                                  << " B, actual " << sp.tp_bytes_backward << " B");
  CHECK(rel(sp.tp_bytes_forward, layers * 4 * unit) < 1e-12);
  CHECK(rel(sp.tp_bytes_backward, layers * 6 * unit) < 1e-12);
  CHECK(c.output_bytes == S);
}

namespace {
// A collective of c beside a GEMM of g: the GEMM runs (1 + s) times slower while the collective
// runs (Lee et al. 2025's average s = 18.9%), so the pair takes c when the slowed GEMM ends first,
// else g plus the c s / (1 + s) of GEMM work the collective displaced.
double pair_s(double c, double g) {
  const double s = hetsim::kOverlapComputeSlowdown;
  return c >= g * (1 + s) ? c : g + c * s / (1 + s);
}
}  // namespace

TEST_CASE("a GEMM beside a collective is slowed while the collective runs") {
  const double s = hetsim::kOverlapComputeSlowdown;
  CHECK(hetsim::overlapped_pair_s(0, 2e-3) == 2e-3);
  CHECK(hetsim::overlapped_pair_s(2e-3, 0) == 2e-3);
  CHECK(rel(hetsim::overlapped_pair_s(1e-3, 2e-3), 2e-3 + 1e-3 * s / (1 + s)) < 1e-12);
  CHECK(rel(hetsim::overlapped_pair_s(5e-3, 2e-3), 5e-3) < 1e-12);
  // At the boundary the GEMM, slowed the whole time, ends with the collective.
  CHECK(rel(hetsim::overlapped_pair_s(2e-3 * (1 + s), 2e-3), 2e-3 * (1 + s)) < 1e-12);
}

TEST_CASE("TP time: exposed forward, all-gathers beside dgrads, input-gradient collectives beside wgrads") {
  // Unit GPU (1 PFLOP/s bf16): the QKV dgrad (0.10 ms) is shorter than an all-gather of S (0.20
  // ms at 300 GB/s), so the SP re-gather shows for what the slowed dgrad does not cover; the
  // wgrads hide what they can (pair_s).
  const auto m = llama2_7b();
  hetsim::ParallelPlan plan = tp8_plan();
  const auto& links = kLinks;
  const double ar = 2 * tp8_ring_pass_s(), ag = tp8_ring_pass_s();
  const auto c = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, links);
  const double qkv_w = op_seconds(m, plan, "qkv_proj", true);
  const double up_w = op_seconds(m, plan, "mlp_gate_up_proj", true);
  MESSAGE("no SP: forward expected " << 2 * ar << " s, actual " << c.tp_comm_forward_s << " s");
  CHECK(rel(c.tp_comm_forward_s, 2 * ar) < 1e-12);
  CHECK(rel(c.tp_comm_backward_s, 2 * ar) < 1e-12);  // B's wait when W is split off
  const double hidden = ar + qkv_w - pair_s(ar, qkv_w) + ar + up_w - pair_s(ar, up_w);
  MESSAGE("no SP: hidden beside the wgrads expected " << hidden << " s, actual "
                                                      << c.backward_overlap_s << " s");
  CHECK(rel(c.backward_overlap_s, hidden) < 1e-12);
  CHECK(rel(c.fused_backward_s(), c.backward_input_s + c.backward_weight_s - hidden) < 1e-12);

  plan.sequence_parallel = true;
  const auto sp = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, links);
  const double qkv_b = op_seconds(m, plan, "qkv_proj", false);
  const double up_b = op_seconds(m, plan, "mlp_gate_up_proj", false);
  const double regather = pair_s(ag, qkv_b) - qkv_b + pair_s(ag, up_b) - up_b;
  const double expected_b = 2 * ag + regather + 2 * ag;
  MESSAGE("SP: forward expected " << 4 * ag << " s, actual " << sp.tp_comm_forward_s << " s");
  CHECK(rel(sp.tp_comm_forward_s, 4 * ag) < 1e-12);
  MESSAGE("SP: backward expected " << expected_b << " s (re-gathers showing " << regather
                                   << " s), actual " << sp.tp_comm_backward_s << " s");
  CHECK(regather > 0);
  CHECK(rel(sp.tp_comm_backward_s, expected_b) < 1e-12);
  CHECK(rel(sp.backward_overlap_s, ag + qkv_w - pair_s(ag, qkv_w) + ag + up_w - pair_s(ag, up_w)) < 1e-12);
}

TEST_CASE("without the asynchronous TP all-reduce the input-gradient all-reduces are waited for") {
  // Megatron-LM before LinearWithGradAccumulationAndAsyncAllreduce: autograd all-reduces a
  // column-parallel layer's input gradient after its dgrad and wgrad, so an unsplit backward
  // pays both all-reduces in full and nothing hides beside the wgrads.
  const auto m = llama2_7b();
  hetsim::ParallelPlan plan = tp8_plan();
  const auto& links = kLinks;
  const double ar = 2 * tp8_ring_pass_s();
  const auto async = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, links);
  plan.async_tp_allreduce = false;
  const auto sync = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, links);
  CHECK(sync.backward_overlap_s == 0.0);
  CHECK(rel(sync.tp_comm_backward_s, 2 * ar) < 1e-12);
  CHECK(rel(sync.fused_backward_s(), sync.backward_input_s + sync.backward_weight_s) < 1e-12);
  MESSAGE("unsplit backward: async " << async.fused_backward_s() << " s, sync "
                                     << sync.fused_backward_s() << " s");
  CHECK(rel(sync.fused_backward_s() - async.fused_backward_s(), async.backward_overlap_s) < 1e-12);
  CHECK(sync.forward_s == async.forward_s);

  // With sequence parallelism the collectives always overlap (Megatron turns the flag off then).
  plan.sequence_parallel = true;
  const auto sp_sync = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, links);
  plan.async_tp_allreduce = true;
  const auto sp_async = hetsim::cost_chunk(m, plan, unit_gpu(), {0, 1, false, false}, links);
  CHECK(sp_sync.fused_backward_s() == sp_async.fused_backward_s());
  CHECK(sp_sync.backward_overlap_s == sp_async.backward_overlap_s);
}

TEST_CASE("scatter/gather: a stage all-gathers each received slice before using it") {
  // Narayanan et al. 2021, Sec. 4.1: each tensor-parallel rank sends 1/t of the replicated
  // output, and the receiver all-gathers the whole S = b*s*h*2 over its group: one ring
  // all-gather before every F but the first stage's, one before every B but the last stage's.
  const auto m = llama2_7b();
  hetsim::ParallelPlan plan = tp8_plan();
  const hetsim::TensorParallelLinks links{300e9, 3e-6};
  const double S = 2.0 * 2 * 4096 * 4096, gather = hetsim::ring_all_gather_s(S, 8, links);
  const hetsim::ChunkSpan first{0, 4, true, false}, middle{4, 4, false, false}, last{8, 4, false, true};
  hetsim::ParallelPlan sg = plan;
  sg.scatter_gather_p2p = true;
  CHECK(plan.pipeline_send_shards() == 1);
  CHECK(sg.pipeline_send_shards() == 8);
  for (const auto& span : {first, middle, last}) {
    const auto whole = hetsim::cost_chunk(m, plan, unit_gpu(), span, links);
    const auto sliced = hetsim::cost_chunk(m, sg, unit_gpu(), span, links);
    const double f = span.has_embedding ? 0 : gather, b = span.has_lm_head ? 0 : gather;
    CHECK(sliced.forward_s - whole.forward_s == doctest::Approx(f).epsilon(1e-12));
    CHECK(sliced.backward_input_s - whole.backward_input_s == doctest::Approx(b).epsilon(1e-12));
    CHECK(sliced.tp_bytes_forward - whole.tp_bytes_forward ==
          doctest::Approx(span.has_embedding ? 0 : 7.0 / 8 * S).epsilon(1e-12));
  }
  // With sequence parallelism the output is already sharded by sequence: nothing to gather.
  plan.sequence_parallel = sg.sequence_parallel = true;
  CHECK(sg.pipeline_send_shards() == 8);
  CHECK(hetsim::cost_chunk(m, sg, unit_gpu(), middle, links).forward_s ==
        hetsim::cost_chunk(m, plan, unit_gpu(), middle, links).forward_s);
}

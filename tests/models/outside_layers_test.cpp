// Work outside the transformer layers, as Megatron-LM runs it, in closed form on the unit GPU
// (2 TB/s, efficiency 1, no overhead: a memory-bound kernel of N bytes takes N / 2e12 s).
//  - vocabulary-parallel cross entropy (megatron/core/tensor_parallel/cross_entropy.py) over the
//    GPU's b*s x v/t logits: forward cast (e + 4), max (4), subtract (8), exp (8), sum (4),
//    divide into the fp32 softmax (8) = e + 36 B per logit; backward scale in place (8) and
//    cast back (4 + e) = 12 + e B;
//  - embedding weight gradient: zero-filled dense table gradient (e), dY's rows summed into it
//    (3e per dY element), added into the fp32 main gradient (e + 4 read, 4 written);
//  - optimizer step per parameter of the shard: gradient norm 4 B, Adam 28 B, master-to-bf16
//    copy 6 B; and 4 B per main-gradient element held to zero it. fp16 adds the loss scaler's
//    unscale (8 B) and, with fp16 main gradients, their copy into fp32 ones (6 B), whose
//    buffer zeroes 2 B per element.
#include <doctest/doctest.h>

#include <string>

#include "models/chunk_cost.hpp"
#include "models/layer_ops.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::op_named;
using hetsim::test::rel;
using hetsim::test::unit_gpu;

}  // namespace

TEST_CASE("cross entropy moves e + 36 B per logit forward and 12 + e backward (Megatron's passes)") {
  const auto m = hetsim::load_transformer_config(hetsim::test::config_path("gpt3-175b"));
  hetsim::ParallelPlan plan;
  plan.tp = 8;
  plan.micro_batch_size = 2;
  plan.seq_length = 2048;
  const auto ops = hetsim::lm_head_ops(m, plan);
  const hetsim::LayerOp& ce = op_named(ops, "cross_entropy");
  const double logits = 2.0 * 2048 * 50257 / 8;
  MESSAGE("bf16 forward: expected " << 38 * logits << " B, actual " << ce.forward.bytes << " B");
  CHECK(rel(ce.forward.bytes, 38 * logits) < 1e-12);
  MESSAGE("bf16 backward: expected " << 14 * logits << " B, actual " << ce.backward_input.bytes << " B");
  CHECK(rel(ce.backward_input.bytes, 14 * logits) < 1e-12);
  plan.dtype = hetsim::Dtype::kFp32;  // fp32 logits: no casts
  const auto ops32 = hetsim::lm_head_ops(m, plan);
  const hetsim::LayerOp& ce32 = op_named(ops32, "cross_entropy");
  CHECK(rel(ce32.forward.bytes, 32 * logits) < 1e-12);
  CHECK(rel(ce32.backward_input.bytes, 8 * logits) < 1e-12);
}

TEST_CASE("embedding wgrad: dense table gradient, dY rows summed in, fp32 main-gradient add") {
  const auto m = hetsim::load_transformer_config(hetsim::test::config_path("gpt3-175b"));
  hetsim::ParallelPlan plan;
  plan.tp = 8;
  plan.seq_length = 2048;
  const double h = 12288, tokens = 2048, table = (50257.0 / 8 + 2048) * h;  // words + positions
  const auto embedding = hetsim::embedding_ops(m, plan);
  const hetsim::LayerOp& lookup = op_named(embedding, "embedding_lookup");
  const double expected = 8 * table + 2 * 3 * 2 * tokens * h;
  MESSAGE("expected " << expected << " B, actual " << lookup.backward_weight.bytes << " B");
  CHECK(rel(lookup.backward_weight.bytes, expected) < 1e-12);
}

TEST_CASE("optimizer step: grad norm, Adam, bf16 copy over the shard; zeroing the held gradients") {
  const auto m = hetsim::load_transformer_config(hetsim::test::config_path("llama-2-7b"));
  hetsim::ParallelPlan plan;
  plan.dp = 4;
  const hetsim::ChunkSpan span{0, 2, false, false};
  const auto whole = hetsim::cost_chunk(m, plan, unit_gpu(), span, {});
  const double P = whole.params;
  MESSAGE("no ZeRO: expected " << 42 * P / 2e12 << " s, actual " << whole.optimizer_step_s << " s");
  CHECK(rel(whole.optimizer_step_s, 42 * P / 2e12) < 1e-12);
  plan.distributed_optimizer = true;  // stage 1: the step on P/dp, the whole gradient zeroed
  const auto dist = hetsim::cost_chunk(m, plan, unit_gpu(), span, {});
  CHECK(rel(dist.optimizer_step_s, (38 * P / 4 + 4 * P) / 2e12) < 1e-12);
  plan.zero_stage = 2;  // gradients sharded too
  const auto z2 = hetsim::cost_chunk(m, plan, unit_gpu(), span, {});
  CHECK(rel(z2.optimizer_step_s, 42 * P / 4 / 2e12) < 1e-12);
}

TEST_CASE("fp16 optimizer step: the loss scaler's unscale, and the fp16 gradients' copy into fp32") {
  const auto m = hetsim::load_transformer_config(hetsim::test::config_path("llama-2-7b"));
  hetsim::ParallelPlan plan;
  plan.dp = 4;
  plan.dtype = hetsim::Dtype::kFp16;
  const hetsim::ChunkSpan span{0, 2, false, false};
  const auto fp16_grads = hetsim::cost_chunk(m, plan, unit_gpu(), span, {});
  const double P = fp16_grads.params;
  // norm 4 + Adam 28 + master copy 6 + unscale 8 + grad copy 6, zeroing 2-byte gradients
  MESSAGE("fp16 gradients: expected " << 54 * P / 2e12 << " s, actual " << fp16_grads.optimizer_step_s << " s");
  CHECK(rel(fp16_grads.optimizer_step_s, 54 * P / 2e12) < 1e-12);
  plan.accumulate_allreduce_grads_in_fp32 = true;  // fp32 main gradients: no copy, 4-byte zeroing
  const auto fp32_grads = hetsim::cost_chunk(m, plan, unit_gpu(), span, {});
  CHECK(rel(fp32_grads.optimizer_step_s, 50 * P / 2e12) < 1e-12);
}

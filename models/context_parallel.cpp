#include "models/context_parallel.hpp"

#include <algorithm>

#include "models/layer_ops.hpp"

namespace hetsim {

double context_parallel_kv_block_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  // K and V of the GPU's kv heads: 2 x head_dim each, or MLA's query/key and value widths.
  const double widths = model.is_mla() ? model.query_key_head_dim() + model.value_head_dim()
                                       : 2.0 * model.head_dim();
  return widths * plan.micro_batch_size * plan.local_seq_length() * model.num_kv_heads *
         activation_element_bytes(plan.dtype) / plan.tp;
}

RingPass ring_attention_pass(double core_s, double block_bytes, int cp,
                             const ContextParallelLinks& links) {
  if (cp <= 1) return {core_s, 0.0, 0.0};
  const double step_s = core_s / cp;
  const double transfer_s = links.latency_s + block_bytes / links.bandwidth_bytes_per_s;
  const double seconds = step_s + (cp - 1) * std::max(step_s, transfer_s);
  return {seconds, seconds - core_s, (cp - 1) * block_bytes};
}

ContextParallelRing context_parallel_ring(const TransformerConfig& model, const ParallelPlan& plan,
                                          double core_forward_s, double core_backward_s,
                                          const ContextParallelLinks& links) {
  ContextParallelRing ring;
  const double block = context_parallel_kv_block_bytes(model, plan);
  ring.forward = ring_attention_pass(core_forward_s, block, plan.cp, links);
  ring.backward = ring_attention_pass(core_backward_s, 2 * block, plan.cp, links);
  if (plan.cp > 1) ring.backward_buffer_bytes = 2 * 2 * block;
  return ring;
}

ContextParallelTraffic context_parallel_per_microbatch(const ChunkCost& cost, Recompute recompute) {
  const double forward_runs = recompute == Recompute::kNone ? 1.0 : 2.0;
  return {forward_runs * cost.cp_comm_forward_s + cost.cp_comm_backward_s,
          forward_runs * cost.cp_bytes_forward + cost.cp_bytes_backward};
}

}  // namespace hetsim

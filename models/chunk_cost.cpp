// What one model chunk costs one GPU of its tensor-parallel group for one microbatch.
#include "models/chunk_cost.hpp"

#include <string>

#include "base/error.hpp"
#include "models/layer_ops.hpp"
#include "models/roofline.hpp"
#include "models/tp_collectives.hpp"

namespace hetsim {

namespace {

struct PassTimes {
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0, core_forward_s = 0;
  double forward_flops = 0, backward_input_flops = 0, backward_weight_flops = 0;
  double core_forward_flops = 0;
};

// Times and FLOPs of `ops` (one layer, the embedding or the LM head), each op's source counted
// `instances` times (the layers of the chunk) into `sources` when it is not null.
PassTimes time_ops(const std::vector<LayerOp>& ops, const GpuSpec& gpu, Dtype dtype,
                   const calibration::Profile* profile, long instances, CostSources* sources,
                   const Fp8Linears& fp8 = {}) {
  const std::vector<OpCost> costs = cost_ops(ops, gpu, dtype, profile, fp8);
  if (sources) count_sources(ops, costs, instances, *sources);
  PassTimes p;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const LayerOp& op = ops[i];
    const double f = costs[i].forward.seconds;
    p.forward_s += f;
    p.backward_input_s += costs[i].backward_input.seconds;
    p.backward_weight_s += costs[i].backward_weight.seconds;
    p.forward_flops += op.forward.flops;
    p.backward_input_flops += op.backward_input.flops;
    p.backward_weight_flops += op.backward_weight.flops;
    if (op.attention_core) {
      p.core_forward_s += f;
      p.core_forward_flops += op.forward.flops;
    }
  }
  return p;
}

// TP collectives, costed and (when `sources` is not null) counted `instances` times.
class TpCosts {
 public:
  TpCosts(int ranks, const TensorParallelLinks& links, const calibration::Profile* profile,
          CostSources* sources)
      : ranks_(ranks), links_(links), profile_(profile), sources_(sources) {}
  double operator()(TpCollective op, double bytes, long instances = 1) const {
    const PassCost c = tp_collective_cost(op, bytes, ranks_, links_, profile_);
    if (sources_) sources_->tp_collective.add(c.source, instances);
    return c.seconds;
  }

 private:
  int ranks_;
  const TensorParallelLinks& links_;
  const calibration::Profile* profile_;
  CostSources* sources_;
};

// Megatron-LM's tensor-parallel collectives, each over the whole [b*s, h] activation.
struct TpComm {
  double forward_s = 0, backward_s = 0;
};

TpComm layer_tp_comm(double act_bytes, const ParallelPlan& plan, const TpCosts& tp, long layers) {
  TpComm c;
  if (plan.sequence_parallel) {
    // g / g-bar: all-gather before QKV and MLP-up, reduce-scatter after attention-out and
    // MLP-down; backward swaps them. Two of each per pass.
    const double pair = tp(TpCollective::kAllGather, act_bytes, 4 * layers) +
                        tp(TpCollective::kReduceScatter, act_bytes, 4 * layers);
    c.forward_s = 2 * pair;
    c.backward_s = 2 * pair;
  } else {
    // f / g: all-reduce after attention-out and MLP-down forward, after QKV and MLP-up dgrad.
    const double all_reduce = tp(TpCollective::kAllReduce, act_bytes, 4 * layers);
    c.forward_s = 2 * all_reduce;
    c.backward_s = 2 * all_reduce;
  }
  return c;
}

void check_inputs(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                  const ChunkSpan& span, const TensorParallelLinks& links,
                  const ExpertParallelLinks& ep_links) {
  if (model.hidden_size <= 0 || model.num_heads <= 0 || model.num_kv_heads <= 0 ||
      model.ffn_hidden_size <= 0 || model.vocab_size <= 0 || model.num_layers <= 0) {
    throw PlanError("model \"" + model.name + "\" has a non-positive dimension");
  }
  if (plan.tp < 1 || plan.micro_batch_size < 1 || plan.seq_length < 1) {
    throw PlanError("tp, micro batch size and sequence length must be >= 1");
  }
  if (span.num_layers < 0 || span.first_layer < 0 ||
      span.first_layer + span.num_layers > model.num_layers) {
    throw PlanError("chunk layers [" + std::to_string(span.first_layer) + ", " +
                    std::to_string(span.first_layer + span.num_layers) + ") outside the model's " +
                    std::to_string(model.num_layers) + " layers");
  }
  if (plan.tp > 1 && !(links.bandwidth_bytes_per_s > 0)) {
    throw PlanError("tensor parallelism " + std::to_string(plan.tp) +
                    " needs links with a positive bandwidth");
  }
  if (!(gpu.hbm_bytes_per_s > 0) || !(gpu.peak(Dtype::kFp32) > 0)) {
    throw PlanError("GPU \"" + gpu.key + "\" has no HBM bandwidth or fp32 peak");
  }
  check_data_parallel_sharding(plan);
  if (!model.is_moe()) {
    // Megatron-LM likewise refuses --expert-model-parallel-size > 1 without --num-experts.
    if (plan.ep > 1) {
      throw PlanError("expert parallelism " + std::to_string(plan.ep) + " needs a MoE model; \"" +
                      model.name + "\" is dense");
    }
    return;
  }
  if (model.experts_per_token < 1 || model.experts_per_token > model.num_experts ||
      model.expert_ffn_hidden_size <= 0 || model.shared_expert_ffn_hidden_size < 0) {
    throw PlanError("model \"" + model.name + "\" has top-k " +
                    std::to_string(model.experts_per_token) + " of " +
                    std::to_string(model.num_experts) + " experts or a non-positive expert width");
  }
  if (model.num_experts % plan.ep != 0) {
    throw PlanError("expert parallelism " + std::to_string(plan.ep) + " must divide the " +
                    std::to_string(model.num_experts) + " experts of \"" + model.name + "\"");
  }
  if (plan.ep > 1 && !(ep_links.bandwidth_bytes_per_s > 0)) {
    throw PlanError("expert parallelism " + std::to_string(plan.ep) +
                    " needs all-to-all links with a positive bandwidth");
  }
}

struct LayerParams {
  double total = 0;
  double expert = 0;  // of which routed-expert weights
};

// Parameters of one layer held by one GPU: GEMM weights (and column-parallel biases) sharded by
// tp; norms, row-parallel biases, the router and the shared-expert gate replicated; of the
// routed experts the num_experts / ep local ones, each sharded by tp (Megatron-core's expert
// tensor parallelism defaults to tp).
LayerParams layer_params_per_gpu(const TransformerConfig& m, const ParallelPlan& plan) {
  const double h = m.hidden_size;
  // Row-parallel biases: attention-out, and MLP-down in a dense layer.
  const double row_biases = !m.linear_bias ? 0.0 : m.is_moe() ? h : 2.0 * h;
  const double shared_gate = m.shared_expert_gate ? h : 0.0;
  const double replicated = m.norm_params() + row_biases + m.router_params() + shared_gate;
  const double sharded = m.layer_params() - m.layer_expert_params() - replicated;
  LayerParams p;
  p.expert = m.layer_expert_params() / plan.ep / plan.tp;
  p.total = sharded / plan.tp + replicated + p.expert;
  return p;
}

}  // namespace

double ep_all_to_all_seconds(double bytes_per_gpu, int ep, const ExpertParallelLinks& links) {
  if (ep <= 1) return 0.0;
  const double leaving = bytes_per_gpu * (ep - 1) / ep;
  return links.latency_s + leaving / links.bandwidth_bytes_per_s;
}

double ep_all_to_all_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const double tokens = static_cast<double>(plan.micro_batch_size) * plan.seq_length;
  const double local = plan.sequence_parallel ? tokens / plan.tp : tokens;
  return local * model.experts_per_token * model.hidden_size *
         activation_element_bytes(plan.dtype);
}

ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const ExpertParallelLinks& ep_links) {
  return cost_chunk(model, plan, gpu, span, tp_links, nullptr, nullptr, ep_links);
}

ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const calibration::Profile* profile, CostSources* sources,
                     const ExpertParallelLinks& ep_links) {
  check_inputs(model, plan, gpu, span, tp_links, ep_links);
  ChunkCost c;
  c.layers = span.num_layers;
  const double layers = span.num_layers;
  const int t = plan.tp;
  const double e = activation_element_bytes(plan.dtype);
  const double act_bytes = e * plan.micro_batch_size * static_cast<double>(plan.seq_length) *
                           model.hidden_size;  // the whole [b*s, h] tensor

  // Transformer layers.
  const TpCosts tp(t, tp_links, profile, sources);
  // FP8 (--fp8-format) runs the layers' linear GEMMs only; the embedding and LM head stay bf16.
  const std::vector<LayerOp> layer_ops = transformer_layer_ops(model, plan);
  const PassTimes layer = time_ops(layer_ops, gpu, plan.dtype, profile, span.num_layers, sources,
                                   fp8_linears(plan));
  const TpComm comm = layer_tp_comm(act_bytes, plan, tp, span.num_layers);
  // Expert parallelism: token dispatch and combine all-to-alls in forward, their mirrors (the
  // gradients of the combine, then of the dispatch) in backward.
  const double ep_comm =
      model.is_moe()
          ? 2 * ep_all_to_all_seconds(ep_all_to_all_bytes(model, plan), plan.ep, ep_links)
          : 0.0;
  c.forward_s = layers * (layer.forward_s + comm.forward_s + ep_comm);
  c.backward_input_s = layers * (layer.backward_input_s + comm.backward_s + ep_comm);
  if (plan.fp8 != Fp8Format::kNone) {
    c.forward_s += fp8_scale_update_seconds(layer_ops, layers, false, gpu);
    c.backward_input_s += fp8_scale_update_seconds(layer_ops, layers, true, gpu);
  }
  c.backward_weight_s = layers * layer.backward_weight_s;
  c.tp_comm_forward_s = layers * comm.forward_s;
  c.tp_comm_backward_s = layers * comm.backward_s;
  c.ep_comm_forward_s = layers * ep_comm;
  c.ep_comm_backward_s = layers * ep_comm;
  c.forward_flops = layers * layer.forward_flops;
  c.backward_input_flops = layers * layer.backward_input_flops;
  c.backward_weight_flops = layers * layer.backward_weight_flops;
  switch (plan.recompute) {
    case Recompute::kNone: break;
    case Recompute::kSelective:  // Korthikanti: the attention core's forward again in backward
      c.recompute_s = layers * layer.core_forward_s;
      c.recompute_flops = layers * layer.core_forward_flops;
      break;
    case Recompute::kFull:  // the whole layer forward again, its TP and EP collectives included
      c.recompute_s = layers * (layer.forward_s + comm.forward_s + ep_comm);
      c.recompute_flops = layers * layer.forward_flops;
      break;
  }
  c.activation_bytes = layers * layer_activation_bytes(model, plan);
  c.weight_grad_bytes = layers * layer_weight_grad_bytes(model, plan);
  const LayerParams layer_params = layer_params_per_gpu(model, plan);
  c.params = layers * layer_params.total;
  c.expert_params = layers * layer_params.expert;

  if (span.has_embedding) {
    const PassTimes emb =
        time_ops(embedding_ops(model, plan), gpu, plan.dtype, profile, 1, sources);
    // Vocabulary-parallel embedding: partial outputs summed over TP (reduce-scatter with SP).
    const double emb_comm = plan.sequence_parallel ? tp(TpCollective::kReduceScatter, act_bytes)
                                                   : tp(TpCollective::kAllReduce, act_bytes);
    c.forward_s += emb.forward_s + emb_comm;
    c.tp_comm_forward_s += emb_comm;
    c.backward_input_s += emb.backward_input_s;
    c.backward_weight_s += emb.backward_weight_s;
    c.activation_bytes += embedding_activation_bytes(model, plan);
    c.params += static_cast<double>(model.vocab_size) * model.hidden_size / t +
                static_cast<double>(model.learned_positions) * model.hidden_size;
  }
  if (span.has_lm_head) {
    const PassTimes head = time_ops(lm_head_ops(model, plan), gpu, plan.dtype, profile, 1, sources);
    // SP: all-gather the final-norm output for the LM head, reduce-scatter its gradient.
    // Without SP: identity forward, all-reduce of the input gradient backward. The vocabulary-
    // parallel cross entropy all-reduces three fp32 [b*s] vectors (max, sum of exp, target logit).
    const double tokens = plan.micro_batch_size * static_cast<double>(plan.seq_length);
    const double ce_comm = 3 * tp(TpCollective::kAllReduce, 4.0 * tokens, 3);
    const double fwd_comm =
        (plan.sequence_parallel ? tp(TpCollective::kAllGather, act_bytes) : 0.0) + ce_comm;
    const double bwd_comm = plan.sequence_parallel ? tp(TpCollective::kReduceScatter, act_bytes)
                                                   : tp(TpCollective::kAllReduce, act_bytes);
    c.forward_s += head.forward_s + fwd_comm;
    c.backward_input_s += head.backward_input_s + bwd_comm;
    c.backward_weight_s += head.backward_weight_s;
    c.tp_comm_forward_s += fwd_comm;
    c.tp_comm_backward_s += bwd_comm;
    c.forward_flops += head.forward_flops;
    c.backward_input_flops += head.backward_input_flops;
    c.backward_weight_flops += head.backward_weight_flops;
    c.activation_bytes += lm_head_activation_bytes(model, plan);
    c.weight_grad_bytes += lm_head_weight_grad_bytes(model, plan);
    // Untied: the output projection's own weights. Tied with the embedding on another stage:
    // Megatron keeps a copy of the word embeddings on the last stage (gradients all-reduced).
    const bool holds_output_weights = !model.tied_embeddings || !span.has_embedding;
    if (holds_output_weights) {
      c.params += static_cast<double>(model.vocab_size) * model.hidden_size / t;
    }
    c.params += model.final_norm_params();
  }
  c.output_bytes = act_bytes;

  // Adam over this GPU's parameters (from ZeRO stage 1 its shard: dense ones over dp, expert
  // ones over dp / ep): read fp32 master weight, gradient, m, v (16 B); write master, m, v
  // (12 B) and the bf16 weight (2 B).
  const bool sharded = plan.effective_zero_stage() >= 1;
  const double dense_shard = sharded ? static_cast<double>(plan.dp) : 1.0;
  const double expert_shard = sharded ? static_cast<double>(plan.expert_data_parallel()) : 1.0;
  const double adam_bytes =
      30.0 * ((c.params - c.expert_params) / dense_shard + c.expert_params / expert_shard);
  const PassCost adam =
      memory_bound_cost({"adam"}, KernelKind::kElementwise, adam_bytes, gpu, plan.dtype, profile);
  c.optimizer_step_s = adam.seconds;
  if (sources) sources->memory_bound.add(adam.source, 1);
  return c;
}

StaticMemory static_memory(double dense_params, double expert_params, const ParallelPlan& plan,
                           const BytesPerParam& layout) {
  // ZeRO (Rajbhandari et al., SC'20, section 5.1-5.3): with data-parallel degree N_d, stage 1
  // keeps (w + g)Psi + K Psi / N_d, stage 2 w Psi + (g + K) Psi / N_d, stage 3
  // (w + g + K) Psi / N_d.
  // Routed experts are replicated over dp / ep replicas only, so that is their N_d.
  check_data_parallel_sharding(plan);
  const int stage = plan.effective_zero_stage();
  const double dense_nd = plan.dp;
  const double expert_nd = plan.expert_data_parallel();
  const auto sharded = [&](double bytes_per_param, int from_stage) {
    if (stage < from_stage) return bytes_per_param * (dense_params + expert_params);
    return bytes_per_param * (dense_params / dense_nd + expert_params / expert_nd);
  };
  StaticMemory m;
  m.optimizer_bytes = sharded(layout.optimizer, 1);
  m.gradients_bytes = sharded(layout.gradients, 2);
  m.weights_bytes = sharded(layout.weights, 3);
  return m;
}

StaticMemory static_memory(double dense_params, double expert_params, const ParallelPlan& plan) {
  return static_memory(dense_params, expert_params, plan, bytes_per_param(plan));
}

StaticMemory static_memory(double params, const ParallelPlan& plan) {
  return static_memory(params, 0.0, plan);
}

double model_flops_per_iteration(const TransformerConfig& model, const ParallelPlan& plan) {
  // Whole-model FLOPs: one tensor-parallel rank of a tp=1 plan does all of them.
  ParallelPlan whole = plan;
  whole.tp = 1;
  whole.sequence_parallel = false;
  double per_microbatch = 0;
  for (const LayerOp& op : transformer_layer_ops(model, whole)) {
    per_microbatch +=
        model.num_layers * (op.forward.flops + op.backward_input.flops + op.backward_weight.flops);
  }
  for (const LayerOp& op : lm_head_ops(model, whole)) {
    per_microbatch += op.forward.flops + op.backward_input.flops + op.backward_weight.flops;
  }
  const double microbatches_all_replicas =
      static_cast<double>(plan.global_batch_size) / plan.micro_batch_size;
  return per_microbatch * microbatches_all_replicas;
}

}  // namespace hetsim

// What one model chunk costs one GPU of its tensor-parallel group for one microbatch.
#include "models/chunk_cost.hpp"

#include <algorithm>
#include <string>

#include "base/error.hpp"
#include "models/context_parallel.hpp"
#include "models/layer_ops.hpp"
#include "models/roofline.hpp"
#include "models/tp_collectives.hpp"

namespace hetsim {

namespace {

struct PassTimes {
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0, core_forward_s = 0,
         core_backward_s = 0;
  double forward_flops = 0, backward_input_flops = 0, backward_weight_flops = 0;
  double core_forward_flops = 0;
};

// Ops (one layer, the embedding or the LM head) with their costs and the sums over them.
struct TimedOps {
  std::vector<LayerOp> ops;
  std::vector<OpCost> costs;
  PassTimes sums;
  // The named op's cost (a GEMM a collective runs beside); zero when there is none.
  OpCost of(const std::string& name) const {
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].name == name) return costs[i];
    return {};
  }
};

// Times and FLOPs of `ops`, each op's source counted `instances` times (the layers of the chunk)
// into `sources` when it is not null.
TimedOps time_ops(std::vector<LayerOp> ops, const GpuSpec& gpu, Dtype dtype,
                  const calibration::Profile* profile, long instances, CostSources* sources,
                  const Fp8Linears& fp8 = {}) {
  TimedOps t;
  t.costs = cost_ops(ops, gpu, dtype, profile, fp8);
  t.ops = std::move(ops);
  if (sources) count_sources(t.ops, t.costs, instances, *sources);
  PassTimes& p = t.sums;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const LayerOp& op = t.ops[i];
    const double f = t.costs[i].forward.seconds;
    p.forward_s += f;
    p.backward_input_s += t.costs[i].backward_input.seconds;
    p.backward_weight_s += t.costs[i].backward_weight.seconds;
    p.forward_flops += op.forward.flops;
    p.backward_input_flops += op.backward_input.flops;
    p.backward_weight_flops += op.backward_weight.flops;
    if (op.attention_core) {
      p.core_forward_s += f;
      p.core_backward_s += t.costs[i].backward_input.seconds;
      p.core_forward_flops += op.forward.flops;
    }
  }
  return t;
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
  int ranks() const { return ranks_; }

 private:
  int ranks_;
  const TensorParallelLinks& links_;
  const calibration::Profile* profile_;
  CostSources* sources_;
};

// What a TpSchedule costs beside the ops it overlaps (see TpOverlap).
struct TpComm {
  double forward_s = 0;   // exposed forward collectives
  double backward_s = 0;  // collective time B waits for when W is split off
  double wgrad_hidden_s = 0;  // of backward_s, what hides beside the wgrads when B and W are one
  double forward_bytes = 0, backward_bytes = 0;  // sent by one GPU
};

TpComm schedule_cost(const TpSchedule& schedule, const TimedOps& ops, const TpCosts& tp,
                     long instances) {
  TpComm c;
  for (const ScheduledCollective& x : schedule.forward) {
    c.forward_s += tp(x.op, x.bytes, instances);
    c.forward_bytes += ring_bytes_sent(x.op, x.bytes, tp.ranks());
  }
  for (const ScheduledCollective& x : schedule.backward) {
    const double seconds = tp(x.op, x.bytes, instances);
    c.backward_bytes += ring_bytes_sent(x.op, x.bytes, tp.ranks());
    switch (x.overlap) {
      case TpOverlap::kExposed:
        c.backward_s += seconds;
        break;
      case TpOverlap::kDgrad: {  // the dgrad is already in the op times
        const double dgrad = ops.of(x.gemm).backward_input.seconds;
        c.backward_s += overlapped_pair_s(seconds, dgrad) - dgrad;
        break;
      }
      case TpOverlap::kWgrad: {
        const double wgrad = ops.of(x.gemm).backward_weight.seconds;
        c.backward_s += seconds;
        c.wgrad_hidden_s += seconds + wgrad - overlapped_pair_s(seconds, wgrad);
        break;
      }
    }
  }
  return c;
}

void check_inputs(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                  const ChunkSpan& span, const TensorParallelLinks& links,
                  const ExpertParallelLinks& ep_links, const ContextParallelLinks& cp_links) {
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
  check_context_parallel(plan);
  if (plan.cp > 1 && !(cp_links.bandwidth_bytes_per_s > 0)) {
    throw PlanError("context parallelism " + std::to_string(plan.cp) +
                    " needs ring links with a positive bandwidth");
  }
  if (plan.cp > 1 && model.attended_keys(plan.seq_length) < plan.seq_length) {
    // Sliding windows skip ring steps whose keys lie outside every window; not modelled.
    throw PlanError("--context-parallel-size " + std::to_string(plan.cp) + ": model \"" +
                    model.name + "\" uses sliding-window attention (window " +
                    std::to_string(model.sliding_window) +
                    "), which the context-parallel ring does not model; use cp 1");
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
// tp; norms, row-parallel biases, the router, the shared-expert gate and MLA's down-projections
// with their latent norms replicated; of the
// routed experts the num_experts / ep local ones, each sharded by tp (Megatron-core's expert
// tensor parallelism defaults to tp).
LayerParams layer_params_per_gpu(const TransformerConfig& m, const ParallelPlan& plan) {
  const double h = m.hidden_size;
  // Row-parallel biases: attention-out, and MLP-down in a dense layer.
  const double row_biases = !m.linear_bias ? 0.0 : m.is_moe() ? h : 2.0 * h;
  const double shared_gate = m.shared_expert_gate ? h : 0.0;
  const double replicated = m.norm_params() + row_biases + m.router_params() + shared_gate +
                            m.attention_replicated_params();
  const double sharded = m.layer_params() - m.layer_expert_params() - replicated;
  LayerParams p;
  p.expert = m.layer_expert_params() / plan.ep / plan.tp;
  p.total = sharded / plan.tp + replicated + p.expert;
  return p;
}

// Adds to `c` what `count` layers alike of `model` cost (a MoE model's dense first layers come
// as its dense_layer_model()): op times with their TP, EP and CP communication, recompute,
// FLOPs, activation bytes and parameters.
void add_layers(const TransformerConfig& model, int count, const ParallelPlan& plan,
                const GpuSpec& gpu, const TpCosts& tp, const calibration::Profile* profile,
                CostSources* sources, const ExpertParallelLinks& ep_links,
                const ContextParallelLinks& cp_links, ChunkCost& c) {
  if (count <= 0) return;  // a chunk of DeepSeek's dense layers only, or no layers at all
  const double layers = count;
  // FP8 (--fp8-format) runs the layers' linear GEMMs only; the embedding and LM head stay bf16.
  const TimedOps layer_ops = time_ops(transformer_layer_ops(model, plan), gpu, plan.dtype,
                                      profile, count, sources, fp8_linears(plan));
  const PassTimes& layer = layer_ops.sums;
  const TpComm comm = schedule_cost(layer_tp_schedule(model, plan), layer_ops, tp, count);
  // Expert parallelism: token dispatch and combine all-to-alls in forward, their mirrors (the
  // gradients of the combine, then of the dispatch) in backward.
  const double ep_comm =
      model.is_moe()
          ? 2 * ep_all_to_all_seconds(ep_all_to_all_bytes(model, plan), plan.ep, ep_links)
          : 0.0;
  // Context parallelism: the ring's exposed transfers beside the attention core.
  const ContextParallelRing ring =
      context_parallel_ring(model, plan, layer.core_forward_s, layer.core_backward_s, cp_links);
  const double cp_forward = ring.forward.exposed_s;
  c.forward_s += layers * (layer.forward_s + comm.forward_s + ep_comm + cp_forward);
  c.backward_input_s +=
      layers * (layer.backward_input_s + comm.backward_s + ep_comm + ring.backward.exposed_s);
  if (plan.fp8 != Fp8Format::kNone) {
    c.forward_s += fp8_scale_update_seconds(layer_ops.ops, layers, false, gpu);
    c.backward_input_s += fp8_scale_update_seconds(layer_ops.ops, layers, true, gpu);
  }
  c.backward_weight_s += layers * layer.backward_weight_s;
  c.backward_overlap_s += layers * comm.wgrad_hidden_s;
  c.tp_comm_forward_s += layers * comm.forward_s;
  c.tp_comm_backward_s += layers * comm.backward_s;
  c.tp_bytes_forward += layers * comm.forward_bytes;
  c.tp_bytes_backward += layers * comm.backward_bytes;
  c.ep_comm_forward_s += layers * ep_comm;
  c.ep_comm_backward_s += layers * ep_comm;
  c.cp_comm_forward_s += layers * cp_forward;
  c.cp_comm_backward_s += layers * ring.backward.exposed_s;
  c.cp_bytes_forward += layers * ring.forward.bytes_sent;
  c.cp_bytes_backward += layers * ring.backward.bytes_sent;
  c.forward_flops += layers * layer.forward_flops;
  c.backward_input_flops += layers * layer.backward_input_flops;
  c.backward_weight_flops += layers * layer.backward_weight_flops;
  switch (plan.recompute) {
    case Recompute::kNone: break;
    case Recompute::kSelective:  // Korthikanti: the attention core's forward again in backward
      c.recompute_s += layers * (layer.core_forward_s + cp_forward);
      c.recompute_flops += layers * layer.core_forward_flops;
      break;
    case Recompute::kFull:  // the whole layer forward again, its TP and EP collectives included
      c.recompute_s += layers * (layer.forward_s + comm.forward_s + ep_comm + cp_forward);
      c.ep_comm_recompute_s += layers * ep_comm;
      c.recompute_flops += layers * layer.forward_flops;
      break;
  }
  c.activation_bytes += layers * layer_activation_bytes(model, plan);
  c.weight_grad_bytes += layers * layer_weight_grad_bytes(model, plan);
  c.backward_transient_bytes =
      std::max(c.backward_transient_bytes,
               layer_recompute_transient_bytes(model, plan) + ring.backward_buffer_bytes);
  const LayerParams layer_params = layer_params_per_gpu(model, plan);
  c.params += layers * layer_params.total;
  c.expert_params += layers * layer_params.expert;
}

// The multi-token prediction depths on the chunk holding the LM head (Megatron-core places them
// on the last pipeline stage): each depth's input part, its transformer layer, and the shared LM
// head with its loss again; `add_end` adds ops and their collectives as for the embedding and
// LM head. Parameters: the norms (replicated) and the projection (split by tp) of each depth,
// its layer's, and, on a stage without the input embedding, Megatron's copy of the embedding
// table there (its gradient all-reduced with the first stage's, as tied embeddings are).
template <typename AddEnd>
void add_multi_token_prediction(const TransformerConfig& model, const ParallelPlan& plan,
                                const GpuSpec& gpu, const ChunkSpan& span, const TpCosts& tp,
                                const calibration::Profile* profile, CostSources* sources,
                                const ExpertParallelLinks& ep_links,
                                const ContextParallelLinks& cp_links, const AddEnd& add_end,
                                ChunkCost& c) {
  const double h = model.hidden_size;
  for (int depth = 0; depth < model.mtp_depth; ++depth) {
    add_end(mtp_input_ops(model, plan), mtp_input_tp_schedule(model, plan));
    add_end(lm_head_ops(model, plan), lm_head_tp_schedule(model, plan));
  }
  add_layers(model, model.mtp_depth, plan, gpu, tp, profile, sources, ep_links, cp_links, c);
  c.layers += model.mtp_depth;
  c.activation_bytes += model.mtp_depth * (mtp_input_activation_bytes(model, plan) +
                                           lm_head_activation_bytes(model, plan));
  c.weight_grad_bytes += model.mtp_depth * (mtp_input_weight_grad_bytes(model, plan) +
                                            lm_head_weight_grad_bytes(model, plan));
  c.params += model.mtp_depth * (3 * model.final_norm_params() + 2 * h * h / plan.tp);
  // (Tied embeddings already put that copy there as the LM head's weights.)
  if (!span.has_embedding && !model.tied_embeddings) {
    c.params += static_cast<double>(model.vocab_size) * h / plan.tp;
  }
}

}  // namespace

double ep_all_to_all_seconds(double bytes_per_gpu, int ep, const ExpertParallelLinks& links) {
  if (ep <= 1) return 0.0;
  const double leaving = bytes_per_gpu * (ep - 1) / ep;
  return links.latency_s + leaving / links.bandwidth_bytes_per_s;
}

double ep_all_to_all_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  const double tokens = static_cast<double>(plan.micro_batch_size) * plan.local_seq_length();
  const double local = plan.sequence_parallel ? tokens / plan.tp : tokens;
  return local * model.experts_per_token * model.hidden_size *
         activation_element_bytes(plan.dtype);
}

ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const ExpertParallelLinks& ep_links, const ContextParallelLinks& cp_links) {
  return cost_chunk(model, plan, gpu, span, tp_links, nullptr, nullptr, ep_links, cp_links);
}

ChunkCost cost_chunk(const TransformerConfig& model, const ParallelPlan& plan, const GpuSpec& gpu,
                     const ChunkSpan& span, const TensorParallelLinks& tp_links,
                     const calibration::Profile* profile, CostSources* sources,
                     const ExpertParallelLinks& ep_links, const ContextParallelLinks& cp_links) {
  check_inputs(model, plan, gpu, span, tp_links, ep_links, cp_links);
  ChunkCost c;
  c.layers = span.num_layers;
  const int t = plan.tp;
  const double e = activation_element_bytes(plan.dtype);
  const double act_bytes = e * plan.micro_batch_size * plan.local_seq_length() *
                           model.hidden_size;  // the whole [b*s, h] tensor

  // Transformer layers: DeepSeek's first dense layers held by the chunk, then its layers alike.
  const TpCosts tp(t, tp_links, profile, sources);
  const int dense_layers = model.first_dense_layers_in(span.first_layer, span.num_layers);
  if (dense_layers > 0) {
    add_layers(model.dense_layer_model(), dense_layers, plan, gpu, tp, profile, sources, ep_links,
               cp_links, c);
  }
  add_layers(model, span.num_layers - dense_layers, plan, gpu, tp, profile, sources, ep_links,
             cp_links, c);

  // The embedding and the LM head: their ops and collectives, added to the chunk's.
  const auto add_end = [&](std::vector<LayerOp> ops, const TpSchedule& schedule) {
    const TimedOps timed = time_ops(std::move(ops), gpu, plan.dtype, profile, 1, sources);
    const TpComm end_comm = schedule_cost(schedule, timed, tp, 1);
    c.forward_s += timed.sums.forward_s + end_comm.forward_s;
    c.backward_input_s += timed.sums.backward_input_s + end_comm.backward_s;
    c.backward_weight_s += timed.sums.backward_weight_s;
    c.backward_overlap_s += end_comm.wgrad_hidden_s;
    c.tp_comm_forward_s += end_comm.forward_s;
    c.tp_comm_backward_s += end_comm.backward_s;
    c.tp_bytes_forward += end_comm.forward_bytes;
    c.tp_bytes_backward += end_comm.backward_bytes;
    c.forward_flops += timed.sums.forward_flops;
    c.backward_input_flops += timed.sums.backward_input_flops;
    c.backward_weight_flops += timed.sums.backward_weight_flops;
  };
  if (span.has_embedding) {
    add_end(embedding_ops(model, plan), embedding_tp_schedule(model, plan));
    c.activation_bytes += embedding_activation_bytes(model, plan);
    c.params += static_cast<double>(model.vocab_size) * model.hidden_size / t +
                static_cast<double>(model.learned_positions) * model.hidden_size;
  }
  if (span.has_lm_head) {
    add_end(lm_head_ops(model, plan), lm_head_tp_schedule(model, plan));
    c.activation_bytes += lm_head_activation_bytes(model, plan);
    c.weight_grad_bytes += lm_head_weight_grad_bytes(model, plan);
    // Untied: the output projection's own weights. Tied with the embedding on another stage:
    // Megatron keeps a copy of the word embeddings on the last stage (gradients all-reduced).
    const bool holds_output_weights = !model.tied_embeddings || !span.has_embedding;
    if (holds_output_weights) {
      c.params += static_cast<double>(model.output_width()) * model.hidden_size / t;
    }
    c.params += model.final_norm_params();
    if (model.mtp_depth > 0) add_multi_token_prediction(model, plan, gpu, span, tp, profile, sources,
                                                        ep_links, cp_links, add_end, c);
  }
  c.output_bytes = act_bytes;
  // Scatter/gather: a received slice is all-gathered over the tensor-parallel group before the
  // op that uses it (gather_split_1d_tensor on the compute stream): the forward's input on every
  // stage but the first, the output gradient on every stage but the last.
  if (plan.scatter_gather_p2p && !plan.sequence_parallel && t > 1) {
    const double gather = tp(TpCollective::kAllGather, act_bytes);
    const double sent = ring_bytes_sent(TpCollective::kAllGather, act_bytes, t);
    if (!span.has_embedding) {
      c.forward_s += gather;
      c.tp_comm_forward_s += gather;
      c.tp_bytes_forward += sent;
    }
    if (!span.has_lm_head) {
      c.backward_input_s += gather;
      c.tp_comm_backward_s += gather;
      c.tp_bytes_backward += sent;
    }
  }

  // The optimizer step as Megatron-LM runs it (fp32 main parameters, --clip-grad on by default),
  // over this GPU's parameter shard (from ZeRO stage 1: dense ones over dp x cp, expert ones over
  // dp / ep): the gradient norm reads the fp32 gradients (4 B); Adam reads master weight,
  // gradient, m, v and writes master, m, v (28 B); the master weights are copied into the 2-byte
  // model weights (read 4, write 2). fp16 adds the loss scaler's pass (Float16Optimizer's
  // _unscale_main_grads_and_check_for_nan: read 4, write 4) and, when gradients are kept in fp16
  // (no --accumulate-allreduce-grads-in-fp32), their copy into fp32 main gradients first
  // (_copy_model_grads_to_main_grads: read 2, write 4). The main-gradient buffer it holds
  // (whole below ZeRO stage 2) is zeroed for the next iteration (its 4 or 2 B written).
  const int stage = plan.effective_zero_stage();
  const auto shard_of = [&](bool sharded) {
    const double dense_shard = sharded ? static_cast<double>(plan.data_parallel_with_context()) : 1.0;
    const double expert_shard = sharded ? static_cast<double>(plan.expert_data_parallel()) : 1.0;
    return (c.params - c.expert_params) / dense_shard + c.expert_params / expert_shard;
  };
  const double shard = shard_of(stage >= 1);
  const PassCost adam =
      memory_bound_cost({"adam"}, KernelKind::kElementwise, 28.0 * shard, gpu, plan.dtype, profile);
  std::vector<double> around_adam = {4.0 * shard, 6.0 * shard,
                                     bytes_per_param(plan).gradients * shard_of(stage >= 2)};
  if (plan.dtype == Dtype::kFp16) {
    around_adam.push_back(8.0 * shard);
    if (!plan.grads_in_fp32()) around_adam.push_back(6.0 * shard);
  }
  c.optimizer_step_s = adam.seconds;
  for (const double bytes : around_adam)
    c.optimizer_step_s += kernel_time(KernelKind::kElementwise, {0.0, bytes}, gpu, plan.dtype);
  if (sources) sources->memory_bound.add(adam.source, 1);
  return c;
}

StaticMemory static_memory(double dense_params, double expert_params, const ParallelPlan& plan,
                           const BytesPerParam& layout) {
  // ZeRO (Rajbhandari et al., SC'20, section 5.1-5.3): with data-parallel degree N_d, stage 1
  // keeps (w + g)Psi + K Psi / N_d, stage 2 w Psi + (g + K) Psi / N_d, stage 3
  // (w + g + K) Psi / N_d.
  // Weights are replicated over the dp x cp GPUs (context-parallel ranks hold the same weights);
  // routed experts over dp x cp / ep only, so those are the N_d.
  check_data_parallel_sharding(plan);
  const int stage = plan.effective_zero_stage();
  const double dense_nd = plan.data_parallel_with_context();
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
  whole.cp = 1;
  whole.sequence_parallel = false;
  // Forward and backward FLOPs of `ops`, `times` over.
  double per_microbatch = 0;
  const auto add = [&](const std::vector<LayerOp>& ops, double times) {
    for (const LayerOp& op : ops)
      per_microbatch += times * (op.forward.flops + op.backward_input.flops + op.backward_weight.flops);
  };
  // DeepSeek's first dense layers, then the model's layers alike, the LM head; per multi-token
  // prediction depth its projection, one more layer and the LM head again.
  const std::vector<LayerOp> layer = transformer_layer_ops(model, whole);
  const std::vector<LayerOp> lm_head = lm_head_ops(model, whole);
  if (model.first_dense_layers > 0)
    add(transformer_layer_ops(model.dense_layer_model(), whole), model.first_dense_layers);
  add(layer, model.num_layers - model.first_dense_layers);
  add(lm_head, 1);
  if (model.mtp_depth > 0) {
    add(layer, model.mtp_depth);
    add(mtp_input_ops(model, whole), model.mtp_depth);
    add(lm_head, model.mtp_depth);
  }
  const double microbatches_all_replicas =
      static_cast<double>(plan.global_batch_size) / plan.micro_batch_size;
  return per_microbatch * microbatches_all_replicas;
}

}  // namespace hetsim

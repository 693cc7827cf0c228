#include "models/tp_collectives.hpp"

#include "models/layer_ops.hpp"

namespace hetsim {

namespace {
// The share of the tensor one GPU sends in one pass of a ring: n-1 steps of S/n each.
double ring_pass_share(int ranks) { return ranks <= 1 ? 0.0 : (ranks - 1.0) / ranks; }

double ring_pass_s(double bytes, int ranks, const TensorParallelLinks& links) {
  if (ranks <= 1) return 0.0;
  return ring_pass_share(ranks) * bytes / links.bandwidth_bytes_per_s + (ranks - 1) * links.latency_s;
}
}  // namespace

double ring_all_reduce_s(double bytes, int ranks, const TensorParallelLinks& links) {
  return 2.0 * ring_pass_s(bytes, ranks, links);  // reduce-scatter then all-gather
}
double ring_all_gather_s(double bytes, int ranks, const TensorParallelLinks& links) {
  return ring_pass_s(bytes, ranks, links);
}
double ring_reduce_scatter_s(double bytes, int ranks, const TensorParallelLinks& links) {
  return ring_pass_s(bytes, ranks, links);
}

const char* profile_name(TpCollective op) {
  switch (op) {
    case TpCollective::kAllReduce:
      return "all_reduce";
    case TpCollective::kAllGather:
      return "all_gather";
    case TpCollective::kReduceScatter:
      return "reduce_scatter";
  }
  return "?";
}

PassCost tp_collective_cost(TpCollective op, double bytes, int ranks,
                            const TensorParallelLinks& links, const calibration::Profile* profile) {
  if (ranks <= 1) return {};
  if (profile) {
    if (const auto t = profile->collective_seconds(profile_name(op), bytes, ranks)) {
      return {*t, CostSource::kProfile};
    }
  }
  switch (op) {
    case TpCollective::kAllReduce:
      return {ring_all_reduce_s(bytes, ranks, links), CostSource::kRoofline};
    case TpCollective::kAllGather:
      return {ring_all_gather_s(bytes, ranks, links), CostSource::kRoofline};
    case TpCollective::kReduceScatter:
      return {ring_reduce_scatter_s(bytes, ranks, links), CostSource::kRoofline};
  }
  return {};
}

double ring_bytes_sent(TpCollective op, double bytes, int ranks) {
  const double pass = ring_pass_share(ranks) * bytes;
  return op == TpCollective::kAllReduce ? 2 * pass : pass;
}

namespace {

// The whole [b*s, h] activation of one microbatch, in bytes.
double activation_tensor_bytes(const TransformerConfig& model, const ParallelPlan& plan) {
  return activation_element_bytes(plan.dtype) * plan.micro_batch_size *
         plan.local_seq_length() * model.hidden_size;
}

// A collective the GPU waits for.
ScheduledCollective exposed(TpCollective op, double bytes) { return {op, bytes, TpOverlap::kExposed, {}}; }

// Forward input and backward input-gradient collectives of a branch whose first GEMM is
// column-parallel (`gemm`), or of a MoE block (`gemm` empty). Without sequence parallelism the
// input gradient's all-reduce runs beside the wgrad only with Megatron's asynchronous TP
// all-reduce (LinearWithGradAccumulationAndAsyncCommunication); without it
// (--no-async-tensor-model-parallel-allreduce, and Megatron-LM before it existed) autograd
// reduces the input gradient after the linear layer's whole backward, so the GPU waits for it.
void add_branch_input(TpSchedule& s, const ParallelPlan& plan, double bytes, const std::string& gemm) {
  using enum TpCollective;
  const bool sp = plan.sequence_parallel;
  if (sp) s.forward.push_back(exposed(kAllGather, bytes));
  if (gemm.empty() || (!sp && !plan.async_tp_allreduce)) {
    s.backward.push_back(exposed(sp ? kReduceScatter : kAllReduce, bytes));
    return;
  }
  if (sp) s.backward.push_back({kAllGather, bytes, TpOverlap::kDgrad, gemm});
  s.backward.push_back({sp ? kReduceScatter : kAllReduce, bytes, TpOverlap::kWgrad, gemm});
}

// Forward output reduction of a row-parallel GEMM and, with SP, the backward all-gather of its
// output gradient.
void add_branch_output(TpSchedule& s, bool sp, double bytes) {
  s.forward.push_back(exposed(sp ? TpCollective::kReduceScatter : TpCollective::kAllReduce, bytes));
  if (sp) s.backward.push_back(exposed(TpCollective::kAllGather, bytes));
}

// Multi-head latent attention (Megatron-core's MLASelfAttention): the duplicated down-projections
// need no collective; the column-parallel up-projections take their latents as a column-parallel
// GEMM takes its input (gathered over TP with SP, their gradients reduced), and the shared RoPE
// key likewise (gather_from_sequence_parallel_region with SP), beside no GEMM. Without a query
// latent, the query projection takes the hidden state.
void add_latent_attention_inputs(TpSchedule& s, const TransformerConfig& model,
                                 const ParallelPlan& plan) {
  const double per_width = activation_tensor_bytes(model, plan) / model.hidden_size;
  const LatentAttention& a = model.mla;
  if (a.q_lora_rank > 0) {
    add_branch_input(s, plan, per_width * a.q_lora_rank, "q_up_proj");
  } else {
    add_branch_input(s, plan, activation_tensor_bytes(model, plan), "q_proj");
  }
  add_branch_input(s, plan, per_width * a.kv_lora_rank, "kv_up_proj");
  add_branch_input(s, plan, per_width * a.qk_rope_head_dim, "");
}

}  // namespace

TpSchedule layer_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan) {
  TpSchedule s;
  if (plan.tp <= 1) return s;
  const bool sp = plan.sequence_parallel;
  const double bytes = activation_tensor_bytes(model, plan);
  const std::string mlp_gemm = model.is_moe()                  ? ""
                               : model.mlp == MlpKind::kSwiGlu ? "mlp_gate_up_proj"
                                                               : "mlp_up_proj";
  if (model.is_mla()) {
    add_latent_attention_inputs(s, model, plan);
  } else {
    add_branch_input(s, plan, bytes, "qkv_proj");
  }
  add_branch_output(s, sp, bytes);
  add_branch_input(s, plan, bytes, mlp_gemm);
  if (!model.parallel_residual) add_branch_output(s, sp, bytes);
  return s;
}

TpSchedule embedding_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan) {
  TpSchedule s;
  if (plan.tp <= 1) return s;
  add_branch_output(s, plan.sequence_parallel, activation_tensor_bytes(model, plan));
  return s;
}

TpSchedule mtp_input_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan) {
  TpSchedule s = embedding_tp_schedule(model, plan);
  if (plan.tp <= 1) return s;
  const bool sp = plan.sequence_parallel;
  const double bytes = activation_tensor_bytes(model, plan);
  add_branch_input(s, plan, 2 * bytes, "mtp_eh_proj");
  s.forward.push_back(exposed(TpCollective::kAllGather, bytes));
  if (sp) s.backward.push_back(exposed(TpCollective::kAllGather, bytes));
  return s;
}

TpSchedule lm_head_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan) {
  TpSchedule s;
  if (plan.tp <= 1) return s;
  add_branch_input(s, plan, activation_tensor_bytes(model, plan), "lm_head");
  const double tokens = plan.micro_batch_size * plan.local_seq_length();
  for (int i = 0; i < 3; ++i) s.forward.push_back(exposed(TpCollective::kAllReduce, 4.0 * tokens));
  return s;
}

double overlapped_pair_s(double comm_s, double compute_s) {
  const double slowed = std::min(comm_s, compute_s * (1 + kOverlapComputeSlowdown));
  return std::max(comm_s, compute_s + slowed * kOverlapComputeSlowdown / (1 + kOverlapComputeSlowdown));
}

}  // namespace hetsim

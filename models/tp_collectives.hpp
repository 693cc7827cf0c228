#pragma once
// Ring collectives of a tensor-parallel group on its links (alpha-beta model): for n ranks, a
// message of S bytes, per-GPU bandwidth B per direction and per-step latency L,
//   all-reduce                   2(n-1)/n * S/B + 2(n-1) L
//   all-gather / reduce-scatter    (n-1)/n * S/B +  (n-1) L
// S is the whole tensor (the all-gather output, the reduce-scatter input). One rank costs 0.
// Also which collectives a layer, the embedding and the LM head issue, and what each one runs
// beside (Megatron-LM's tensor and sequence parallelism).
#include <string>
#include <vector>

#include "models/calibration/profile.hpp"
#include "models/chunk_cost.hpp"
#include "models/op_cost.hpp"

namespace hetsim {

double ring_all_reduce_s(double bytes, int ranks, const TensorParallelLinks& links);
double ring_all_gather_s(double bytes, int ranks, const TensorParallelLinks& links);
double ring_reduce_scatter_s(double bytes, int ranks, const TensorParallelLinks& links);

enum class TpCollective { kAllReduce, kAllGather, kReduceScatter };
// The profile's name of a collective ("all_reduce", "all_gather", "reduce_scatter").
const char* profile_name(TpCollective op);

// One tensor-parallel collective of `bytes` (the whole tensor, as nccl-tests' "size" counts it)
// over `ranks` GPUs: Profile::collective_seconds when the profile measured that collective (on
// its own node's GPUs), else the ring formula on `links`. One rank: no collective (0 s, no source).
PassCost tp_collective_cost(TpCollective op, double bytes, int ranks,
                            const TensorParallelLinks& links, const calibration::Profile* profile);

// Bytes one GPU sends in a ring collective of `bytes` over `ranks`: (n-1)/n S for all-gather and
// reduce-scatter, 2(n-1)/n S for all-reduce.
double ring_bytes_sent(TpCollective op, double bytes, int ranks);

// What a collective runs beside, as Megatron-LM's LinearWithGradAccumulationAndAsyncCommunication
// issues it (asynchronously, ordered before the GEMM by CUDA_DEVICE_MAX_CONNECTIONS=1):
enum class TpOverlap {
  kExposed,  // nothing: the GPU waits for it
  kDgrad,    // the all-gather of a column-parallel GEMM's saved input shard (sequence
             // parallelism), beside that GEMM's dgrad (overlapped_pair_s)
  kWgrad,    // the reduce-scatter (SP) or all-reduce of a column-parallel GEMM's input
             // gradient, beside its wgrad when B and W run as one op; exposed when W is split off
};

// A GEMM that runs beside a collective is slowed while the collective runs: the NCCL kernel holds
// SMs and HBM bandwidth. Lee et al. 2025 ("Characterizing Compute-Communication Overlap in
// GPU-Accelerated Distributed Deep Learning: Performance and Power Implications",
// arXiv:2507.03114, abstract) measure an average computational slowdown of 18.9% (at most 40.0%)
// for GPT and LLaMA layers overlapped with their collectives on 4 A100s, H100s, MI250s and MI210s.
inline constexpr double kOverlapComputeSlowdown = 0.189;

// Seconds a collective of `comm_s` and a GEMM of `compute_s` take side by side: the GEMM runs at
// 1 / (1 + slowdown) of its speed while the collective runs, then at full speed, so
// max(comm, compute + min(comm, compute (1 + slowdown)) * slowdown / (1 + slowdown)).
double overlapped_pair_s(double comm_s, double compute_s);

struct ScheduledCollective {
  TpCollective op = TpCollective::kAllReduce;
  double bytes = 0;                         // the whole tensor
  TpOverlap overlap = TpOverlap::kExposed;
  std::string gemm;                         // kDgrad / kWgrad: the LayerOp it runs beside
};

// The TP collectives of one microbatch's forward and backward on one GPU of the group.
struct TpSchedule {
  std::vector<ScheduledCollective> forward, backward;
};

// A transformer layer, Megatron-LM (Korthikanti et al. 2022, section 4.2.2). Each branch
// (attention; MLP or MoE block) of a [b*s, h] activation of S bytes:
//  - without SP: forward all-reduces the row-parallel output (exposed); backward all-reduces the
//    column-parallel input gradient beside that GEMM's wgrad;
//  - with SP: forward all-gathers the branch input and reduce-scatters its output (exposed);
//    backward all-gathers the output gradient (exposed), all-gathers again the input shard the
//    column-parallel GEMM saved (beside its dgrad) and reduce-scatters the input gradient
//    (beside its wgrad): 2 collectives forward and 3 backward where the all-reduce had 1 and 1.
// A MoE block has no column-parallel GEMM on the gathered input, so its backward collectives are
// exposed (no SP: one all-reduce; SP: all-gather + reduce-scatter). With a parallel residual
// (GPT-NeoX) the two branch outputs are summed before one reduction: one output collective
// forward (and with SP one output-gradient all-gather backward) for both branches.
// With multi-head latent attention the attention branch's input collectives are those of its
// q latent, kv latent and shared RoPE key instead of [b*s, h].
TpSchedule layer_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan);

// One multi-token prediction depth's input part (mtp_input_ops): the embedding's collectives,
// then the 2h -> h projection, column-parallel on the concatenated [b*s, 2h] (gathered with SP,
// its gradient reduced), whose h/t-wide output is all-gathered over TP (Megatron-core's
// gather_from_tensor_model_parallel_region; with SP scattered again, whose backward gathers).
TpSchedule mtp_input_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan);

// The vocabulary-parallel embedding: its partial outputs are all-reduced (reduce-scattered with
// SP, whose backward all-gathers the gradient).
TpSchedule embedding_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan);

// The LM head, a column-parallel GEMM on the final-norm output (as a layer's QKV), and the
// vocabulary-parallel cross entropy's three all-reduces of fp32 [b*s] vectors (max, sum of
// exponentials, target logit).
TpSchedule lm_head_tp_schedule(const TransformerConfig& model, const ParallelPlan& plan);

}  // namespace hetsim

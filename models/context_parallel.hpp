#pragma once
// Context parallelism as Megatron-core runs it on Transformer Engine (--context-parallel-size,
// cp_comm_type "p2p"): each of the cp GPUs of a context-parallel group holds seq/cp tokens of
// every sequence, so its linear layers, norms and activations see s/cp tokens, while the
// attention core needs the keys and values of the whole sequence. They travel round a ring
// (TE's AttnFuncWithCPAndKVP2P): in each of cp steps a GPU computes attention of its queries
// against one block of s/cp keys, and in the first cp - 1 of them sends the block it holds to
// the next GPU of the ring while receiving the following one, so a step lasts
// max(attention on one block, one block's transfer). The backward runs the same ring, its
// blocks carrying dK and dV back beside K and V (twice the bytes).
//
// Causal load balancing (Megatron-core's get_batch_on_this_cp_rank): the sequence is cut into
// 2 x cp chunks and rank i keeps chunks i and 2cp - 1 - i, so every rank does the same causal
// work, 1/cp of the whole, and its steps are equal: each takes 1/cp of the rank's attention time.
//
// Weights are replicated over the cp GPUs; their gradients are reduced over the dp x cp group
// (ParallelPlan::data_parallel_with_context).
#include "models/chunk_cost.hpp"
#include "models/parallel_plan.hpp"
#include "models/transformer_config.hpp"

namespace hetsim {

// The K and V of one ring block on one GPU: 2 x b x (s/cp) x kv_heads x head_dim x element
// bytes / tp (grouped-query attention sends only its kv heads).
double context_parallel_kv_block_bytes(const TransformerConfig& model, const ParallelPlan& plan);

// One pass of the ring over one layer, on one GPU.
struct RingPass {
  double seconds = 0;     // attention core and ring together
  double exposed_s = 0;   // of which transfer time no attention step hides: seconds - core
  double bytes_sent = 0;  // (cp - 1) blocks
};

// The ring for an attention core of `core_s` seconds on this GPU (its whole 1/cp share),
// blocks of `block_bytes` sent on `links` (latency + bytes / bandwidth each):
// core/cp + (cp - 1) x max(core/cp, transfer). cp = 1: the core alone, nothing sent.
RingPass ring_attention_pass(double core_s, double block_bytes, int cp,
                             const ContextParallelLinks& links);

// What the ring adds to one layer: the forward (K, V blocks) and the backward (K, V and dK, dV).
struct ContextParallelRing {
  RingPass forward;
  RingPass backward;
  // Bytes live beside the stored activations while the backward's ring runs: two blocks in
  // flight (the one being used and the one arriving), each K, V, dK and dV.
  double backward_buffer_bytes = 0;
};
ContextParallelRing context_parallel_ring(const TransformerConfig& model, const ParallelPlan& plan,
                                          double core_forward_s, double core_backward_s,
                                          const ContextParallelLinks& links);

// What a chunk's rings cost one GPU for one microbatch: the exposed time and the bytes it sends,
// forward and backward, and the forward ring again when recomputation reruns the attention
// (selective and full recompute both do).
struct ContextParallelTraffic {
  double exposed_s = 0;
  double bytes = 0;
};
ContextParallelTraffic context_parallel_per_microbatch(const ChunkCost& cost, Recompute recompute);

}  // namespace hetsim

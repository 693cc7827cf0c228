#pragma once
// What FP8 training (--fp8-format, Transformer Engine's delayed-scaling recipe, as Megatron-LM
// runs it) changes in a layer's cost. Only the linear layers run in FP8; the attention core
// (score and context BMMs, softmax, flash attention), norms, activations and everything outside
// the transformer layers (embedding, LM head, cross entropy) stay in the bf16 base dtype, as
// Transformer Engine's Linear / LayerNormLinear / LayerNormMLP are the only FP8 modules Megatron
// builds. For each FP8 linear layer, on top of its GEMMs at the FP8 peak:
//  - forward: the bf16 input [m, k] is cast to FP8 with its transpose (TE's fused cast-transpose:
//    the GEMM reads X, the wgrad reads X^T, and Hopper's FP8 GEMMs take only the TN layout):
//    read 2 B, write 1 + 1 B per element, one kernel;
//  - the weights [k, n] (every expert's in a grouped GEMM) are cast the same way once per
//    iteration, on the first microbatch, and the FP8 copies reused by later ones (Megatron sets
//    TE's is_first_microbatch): 4 B per weight per iteration, charged to each forward as its
//    1/microbatches share;
//  - backward: the bf16 output gradient [m, n] is cast to FP8 with its transpose (E5M2 under
//    the hybrid format, E4M3 otherwise; the same bytes), for the dgrad and the wgrad GEMM.
// The amax of each tensor is taken inside its cast kernel and its scale read from the amax
// history, so delayed scaling adds no pass per GEMM (TE docs, "FP8 Delayed Scaling": one tensor
// read per quantization). Once per forward and per backward of a model chunk, TE updates every
// amax history and scale in one bulk kernel (nvte_delayed_scaling_recipe_amax_and_scale_update_
// after_reduction): fp8_scale_update_seconds. Not modelled: the all-reduce of the amaxes over
// the amax-reduction group that precedes that update (a few KiB, latency-bound), TE fusing the
// input cast into the preceding norm (LayerNormLinear), which the separate cast here
// over-counts, and the FP8 GEMMs reading 1-byte operands (their memory-bound side keeps the bf16
// operand bytes of models/layer_ops.hpp).
#include <vector>

#include "models/layer_ops.hpp"
#include "models/parallel_plan.hpp"

namespace hetsim {

// What a cost of a layer's ops needs to know about FP8: the format (kNone: no FP8) and the
// microbatches per iteration the weight casts are shared by.
struct Fp8Linears {
  Fp8Format format = Fp8Format::kNone;
  int microbatches = 1;
  bool on() const { return format != Fp8Format::kNone; }
};
// The plan's FP8 for its transformer layers.
Fp8Linears fp8_linears(const ParallelPlan& plan);

// Whether a layer op is one of Transformer Engine's FP8 linear layers: a linear-layer GEMM other
// than the MoE router and the shared-expert gate, which Megatron runs as plain PyTorch linears.
bool runs_in_fp8(const LayerOp& op);

// Weight elements of a linear op (k*n, times the experts of a grouped GEMM), from its forward
// bytes: linear_op / grouped_linear_op read X [m, k] and every weight and write Y [m, n], all of
// `element_bytes`.
double linear_weight_elements(const LayerOp& op, double element_bytes);

// The cast kernels of one FP8 linear op for one microbatch (bytes of HBM traffic and the number
// of kernels, fractional for the per-iteration weight cast).
struct Fp8Casts {
  double forward_bytes = 0, forward_kernels = 0;
  double backward_bytes = 0, backward_kernels = 0;
};
Fp8Casts fp8_casts(const LayerOp& op, double element_bytes, int microbatches);

// Seconds of the casts on `gpu`: each kernel pays the roofline's elementwise overhead, the bytes
// move at its elementwise bandwidth.
double fp8_cast_seconds(double bytes, double kernels, const GpuSpec& gpu);

// The bulk amax-and-scale update after a chunk's forward or backward, over `layers` layers of
// `ops`: it reads and writes each FP8 tensor's amax history entry and scale (fp32), three
// tensors per FP8 linear forward (input, weight, output) and two backward (output and input
// gradients), TE's fp8_meta layout; with Megatron's default --fp8-amax-history-len 1.
double fp8_scale_update_seconds(const std::vector<LayerOp>& ops, double layers, bool backward,
                                const GpuSpec& gpu);

}  // namespace hetsim

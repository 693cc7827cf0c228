#pragma once
// The time of each op of a layer on one GPU, pass by pass: from a measured calibration profile
// (models/calibration/profile.hpp) where the profile has the op, from the roofline
// (models/roofline.hpp) where it does not; and a tally of which source costed what.
#include <vector>

#include "models/calibration/profile.hpp"
#include "models/fp8_cost.hpp"
#include "models/layer_ops.hpp"

namespace hetsim {

enum class CostSource {
  kNone,      // the pass has no kernel (e.g. a norm has no weight-gradient pass)
  kProfile,   // looked up in the measured profile
  kRoofline,  // the profile lacks it (or there is no profile): the roofline for kernels, the
              // ring formula on the node's links for collectives
};

// How many op costs came from the profile and how many from the roofline.
struct SourceCounts {
  long profile = 0;
  long roofline = 0;
  long total() const { return profile + roofline; }
  void add(CostSource source, long times);
};

// The sources of a chunk's op costs by op class. One count per op and pass (forward, backward-
// input, backward-weight) that has work, and one per tensor-parallel collective; a layer's ops
// count once for each layer of the chunk; recompute reuses the forward's costs and adds none.
struct CostSources {
  SourceCounts gemm;           // linear layers (forward, dgrad, wgrad GEMMs)
  SourceCounts attention;      // attention core parts (flash kernel; or QK^T, softmax, PV)
  SourceCounts memory_bound;   // norms, activations, adds, dropout, embedding, cross entropy, Adam
  SourceCounts tp_collective;  // tensor-parallel all-reduce, all-gather, reduce-scatter
  SourceCounts& of(OpClass op_class);
};

struct PassCost {
  double seconds = 0;
  CostSource source = CostSource::kNone;
};
struct OpCost {
  PassCost forward, backward_input, backward_weight;
};

// Costs of `ops` (one layer, the embedding or the LM head), index by index. With a profile:
//  - GEMMs: Profile::gemm_seconds for the forward (m, n, k), dgrad (m, k, n) and wgrad (k, n, m)
//    shapes in `dtype`;
//  - the attention core as one unit: Profile::attention_seconds (causal) for forward and for
//    backward, charged to the core's first op; its other parts (unfused softmax and PV) cost 0
//    and count as profile-costed, being inside the measured unit;
//  - memory-bound ops: Profile::memory_bound_seconds of the op's first profile kind the profile
//    has, at the pass's bytes (backward kernels use the forward kind's time-versus-bytes curve).
// Whatever the profile lacks (op class, dtype, kind, pass) costs kernel_time (the roofline).
// A null profile costs everything by the roofline.
// With `fp8` on, the linear layers Transformer Engine runs in FP8 (runs_in_fp8) look their GEMMs
// up, or cost them by the roofline, in fp8, and each of their forward and backward-input passes
// adds its FP8 cast kernels (models/fp8_cost.hpp, roofline-costed); every other op stays in `dtype`.
std::vector<OpCost> cost_ops(const std::vector<LayerOp>& ops, const GpuSpec& gpu, Dtype dtype,
                             const calibration::Profile* profile, const Fp8Linears& fp8 = {});

// One memory-bound kernel of `bytes` outside a layer (the optimizer step): the first of
// `profile_kinds` the profile has, else the roofline curve `kind`.
PassCost memory_bound_cost(const std::vector<std::string>& profile_kinds, KernelKind kind,
                           double bytes, const GpuSpec& gpu, Dtype dtype,
                           const calibration::Profile* profile);

// Adds `times` copies of each op's pass sources to `sources` (by op class).
void count_sources(const std::vector<LayerOp>& ops, const std::vector<OpCost>& costs, long times,
                   CostSources& sources);

}  // namespace hetsim

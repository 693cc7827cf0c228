#pragma once
// Closed-form bounds that let `hetsim plan` skip candidates without simulating them (branch and
// bound). Both are true lower bounds of what the simulator reports for the candidate:
//  - memory: the static memory (weights, gradients, optimizer state under the ZeRO stage) of the
//    smallest chunks a rank can hold, plus the activations of the most microbatches the
//    timetable keeps in flight on any rank, each of the smallest chunk. When even that exceeds
//    the largest HBM among the GPUs used, some GPU runs out of memory.
//  - time: the timetable's makespan when every op of a chunk takes what the smallest chunk
//    costs on the quickest GPU type used, with free tensor-parallel collectives, a free
//    context-parallel ring (no exposed transfer), and messages between stages are free. The
//    makespan of a fixed order of ops with dependencies is the longest path through them, which
//    can only grow when ops take longer or messages take time, as they do in the simulation. The
//    op costs are the roofline's (models/roofline.hpp), the simulator's own; where a calibration
//    profile costs some GPUs, only the FLOPs at the peak rate are claimed, which no measured
//    kernel beats.
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "tools/plan/plan_space.hpp"

namespace hetsim::plan {

struct PlanBounds {
  double memory_bytes = 0;    // per GPU, lower bound of the largest peak
  double capacity_bytes = 0;  // the largest HBM among the GPUs used
  double time_s = 0;          // lower bound of the iteration time
  double tokens = 0;          // tokens per iteration
  double usd_per_hour = 0;    // list price of the GPUs used
  bool fits() const { return memory_bytes <= capacity_bytes; }
  // Lower bound of the dollars per million tokens (WAN egress only adds to it).
  double usd_per_million_tokens() const { return time_s * usd_per_hour / 3600 / tokens * 1e6; }
};

// The bounds of `candidate` on `subset`. Throws Error (as `run` would) for a candidate the
// model or timetable generator refuses.
PlanBounds plan_bounds(const TransformerConfig& model, const GpuCatalog& catalog,
                       const GpuSubset& subset, const PlanCandidate& candidate,
                       const PlanSpaceOptions& options);

}  // namespace hetsim::plan

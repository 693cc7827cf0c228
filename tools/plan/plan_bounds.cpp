// Lower bounds of a candidate's peak memory and iteration time (see plan_bounds.hpp).
#include "tools/plan/plan_bounds.hpp"

#include <algorithm>

#include "models/chunk_cost.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "tools/hetsim/run_options.hpp"
#include "tools/sweep/point_job.hpp"

namespace hetsim::plan {

PlanBounds plan_bounds(const TransformerConfig& model, const GpuCatalog& catalog,
                       const GpuSubset& subset, const PlanCandidate& candidate,
                       const PlanSpaceOptions& options) {
  // The plan exactly as `run` resolves the candidate's flags.
  const sweep::PointJob job = sweep::parse_point_job(candidate.point(options, subset));
  RunOptions run = cli::resolve_run_options(job.args, model);
  ParallelPlan& plan = run.plan;
  plan.dp = candidate.dp;

  const GpuSpec* fastest = &catalog.at(subset.gpu_types.front());
  double capacity = 0;
  for (const std::string& type : subset.gpu_types) {
    const GpuSpec& gpu = catalog.at(type);
    if (gpu.peak(plan.dtype) > fastest->peak(plan.dtype)) fastest = &gpu;
    capacity = std::max(capacity, gpu.hbm_bytes);
  }

  // The smallest chunk: the even split, which every split of the layers has one at most as
  // large as; no embedding or LM head.
  const int chunks = plan.pp * plan.vpp;
  const ChunkSpan span{0, model.num_layers / chunks, false, false};
  // Only FLOPs and bytes are read from the cost, so the links' figures do not matter.
  const TensorParallelLinks links{fastest->nvlink_bytes_per_s > 0 ? fastest->nvlink_bytes_per_s
                                                                  : fastest->pcie_bytes_per_s,
                                  0};
  const ExpertParallelLinks ep_links{links.bandwidth_bytes_per_s, 0};
  const ChunkCost chunk = cost_chunk(model, plan, *fastest, span, links, ep_links);

  const Timetable timetable =
      make_timetable(run.schedule, plan.pp, plan.microbatches(), plan.vpp);
  const double peak = fastest->peak(plan.dtype);
  UniformOpTimes times;
  times.forward_s = chunk.forward_flops / peak;
  const double recompute_s = chunk.recompute_flops / peak;
  if (timetable.split_backward) {
    times.backward_s = chunk.backward_input_flops / peak + recompute_s;
    times.weight_s = chunk.backward_weight_flops / peak;
  } else {
    times.backward_s =
        (chunk.backward_input_flops + chunk.backward_weight_flops) / peak + recompute_s;
  }

  const std::vector<int> in_flight = peak_activations(timetable, ActivationRelease::kAtBackward);
  const int most_in_flight = *std::max_element(in_flight.begin(), in_flight.end());
  const double dense = chunk.params - chunk.expert_params;
  const StaticMemory statics =
      static_memory(dense * plan.vpp, chunk.expert_params * plan.vpp, plan);
  // PipeOffload sends activations to host memory; how many stay depends on the copy times, so
  // no activation term is claimed for an offloading plan.
  const double activations =
      candidate.offload_fraction > 0 ? 0 : most_in_flight * chunk.activation_bytes;

  PlanBounds bounds;
  bounds.memory_bytes = statics.total() + activations;
  bounds.capacity_bytes = capacity;
  bounds.time_s = evaluate(timetable, times).makespan_s;
  bounds.tokens = static_cast<double>(plan.global_batch_size) * plan.seq_length;
  bounds.usd_per_hour = subset.usd_per_hour;
  return bounds;
}

}  // namespace hetsim::plan

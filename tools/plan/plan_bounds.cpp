// Lower bounds of a candidate's peak memory and iteration time (see plan_bounds.hpp).
#include "tools/plan/plan_bounds.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "models/chunk_cost.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "sim/replay_size.hpp"
#include "tools/hetsim/run_options.hpp"
#include "tools/sweep/point_job.hpp"

namespace hetsim::plan {

namespace {

// Bytes per second of a link that takes no time: 1e30 B/s moves a petabyte in 1e-15 s.
constexpr double kFreeBandwidth = 1e30;

}  // namespace

PlanBounds plan_bounds(const TransformerConfig& model, const GpuCatalog& catalog,
                       const GpuSubset& subset, const PlanCandidate& candidate,
                       const PlanSpaceOptions& options) {
  // The plan exactly as `run` resolves the candidate's flags.
  const sweep::PointJob job = sweep::parse_point_job(candidate.point(options, subset));
  RunOptions run = cli::resolve_run_options(job.args, model);
  ParallelPlan& plan = run.plan;
  plan.dp = candidate.dp;

  double capacity = 0;
  for (const std::string& type : subset.gpu_types)
    capacity = std::max(capacity, catalog.at(type).hbm_bytes);

  // The smallest chunk: the even split, which every split of the layers has one at most as
  // large as, or one layer when the partitioner chooses the split; no embedding or LM head. A
  // model with dense first layers (DeepSeek) tries a chunk from layer 0 and one of MoE layers
  // only, either of which may be the smaller (expert parallelism shrinks the MoE ones).
  const int chunks = plan.pp * plan.vpp;
  const int layers = candidate.balance_layers ? 1 : model.num_layers / chunks;
  std::vector<ChunkSpan> spans = {{0, layers, false, false}};
  if (model.first_dense_layers > 0 && model.first_dense_layers + layers <= model.num_layers)
    spans.push_back({model.first_dense_layers, layers, false, false});
  // Links so fast that the collectives cost nothing: what is left is the ops' own time.
  const TensorParallelLinks free_links{kFreeBandwidth, 0};
  const ExpertParallelLinks free_ep_links{kFreeBandwidth, 0};
  // A free context-parallel ring hides every transfer behind its block's attention: no ring time
  // is added, and each GPU still computes s/cp tokens of every layer.
  const ContextParallelLinks free_cp_links{kFreeBandwidth, 0};
  // A plan `run` would refuse for its size is refused here too, before its timetable is built.
  check_replay_size(plan, run.sequence_splits);
  const Timetable timetable = make_timetable(run.schedule, plan.pp, plan.microbatches(), plan.vpp);
  UniformOpTimes times;
  times.forward_s = times.backward_s = times.weight_s = std::numeric_limits<double>::infinity();
  const std::vector<int> in_flight = peak_activations(timetable, ActivationRelease::kAtBackward);
  const int most_in_flight = *std::max_element(in_flight.begin(), in_flight.end());
  double memory = std::numeric_limits<double>::infinity();
  for (const ChunkSpan& span : spans) {
    for (const std::string& type : subset.gpu_types) {
      const GpuSpec& gpu = catalog.at(type);
      const ChunkCost chunk = cost_chunk(model, plan, gpu, span, free_links, free_ep_links, free_cp_links);
      const double dense = chunk.params - chunk.expert_params;
      const StaticMemory statics = static_memory(dense * plan.vpp, chunk.expert_params * plan.vpp, plan);
      // PipeOffload sends activations to host memory; how many stay depends on the copy times, so
      // no activation term is claimed for an offloading plan.
      const double activations = candidate.offload_fraction > 0 ? 0 : most_in_flight * chunk.activation_bytes;
      memory = std::min(memory, statics.total() + activations);
      // A calibration profile's kernels are measured, not the roofline's: bound them by FLOPs at
      // the peak rate alone.
      const double peak = gpu.peak(gpu.matmul_dtype(plan.dtype));
      const double forward = subset.measured_profiles ? chunk.forward_flops / peak : chunk.forward_s;
      const double input =
          subset.measured_profiles ? chunk.backward_input_flops / peak : chunk.backward_input_s;
      const double weight =
          subset.measured_profiles ? chunk.backward_weight_flops / peak : chunk.backward_weight_s;
      const double recompute =
          subset.measured_profiles ? chunk.recompute_flops / peak : chunk.recompute_s;
      times.forward_s = std::min(times.forward_s, forward);
      if (timetable.split_backward) {
        times.backward_s = std::min(times.backward_s, input + recompute);
        times.weight_s = std::min(times.weight_s, weight);
      } else {
        times.backward_s = std::min(times.backward_s, input + weight + recompute);
        times.weight_s = 0;
      }
    }
  }

  PlanBounds bounds;
  bounds.memory_bytes = memory;
  bounds.capacity_bytes = capacity;
  bounds.time_s = evaluate(timetable, times).makespan_s;
  bounds.tokens = static_cast<double>(plan.global_batch_size) * plan.seq_length;
  bounds.usd_per_hour = subset.usd_per_hour;
  return bounds;
}

}  // namespace hetsim::plan

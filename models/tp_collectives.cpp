#include "models/tp_collectives.hpp"

namespace hetsim {

namespace {
// One pass of a ring: n-1 steps, each moving S/n bytes per GPU.
double ring_pass_s(double bytes, int ranks, const TensorParallelLinks& links) {
  if (ranks <= 1) return 0.0;
  const double n = ranks;
  return (n - 1) / n * bytes / links.bandwidth_bytes_per_s + (n - 1) * links.latency_s;
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

}  // namespace hetsim

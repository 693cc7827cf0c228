#include "sim/replay_size.hpp"

#include <fmt/format.h>

#include "base/error.hpp"

namespace hetsim {

void check_replay_size(const ParallelPlan& plan, int sequence_splits) {
  const double op_runs = 3.0 * plan.dp * plan.pp * plan.vpp * plan.microbatches() * sequence_splits;
  if (op_runs <= kMaxSimulatedOps) return;
  throw PlanError(fmt::format(
      "gbs {} / (mbs {} x dp {}) = {} microbatches per replica, over pp {} x vpp {}{} and {} replicas, "
      "make {:.3g} op runs; expected at most {:.3g} per simulated iteration",
      plan.global_batch_size, plan.micro_batch_size, plan.dp, plan.microbatches(), plan.pp, plan.vpp,
      sequence_splits > 1 ? fmt::format(" x {} sequence splits", sequence_splits) : "", plan.dp, op_runs,
      kMaxSimulatedOps));
}

}  // namespace hetsim

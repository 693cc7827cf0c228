#include "models/parallel_plan.hpp"

#include <string>

#include "base/error.hpp"

namespace hetsim {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "none";
}

const char* to_string(Fp8Format f) {
  switch (f) {
    case Fp8Format::kNone: return "none";
    case Fp8Format::kE4M3: return "e4m3";
    case Fp8Format::kHybrid: return "hybrid";
  }
  return "none";
}

void check_data_parallel_sharding(const ParallelPlan& plan) {
  if (plan.dp < 1 || plan.ep < 1) throw PlanError("dp and ep must be >= 1");
  if (plan.dp % plan.ep != 0) {
    throw PlanError("expert parallelism " + std::to_string(plan.ep) +
                    " must divide data parallelism " + std::to_string(plan.dp) +
                    " (expert-parallel groups are made of data-parallel replicas)");
  }
  if (plan.zero_stage < 0 || plan.zero_stage > 3) {
    throw PlanError("ZeRO stage " + std::to_string(plan.zero_stage) + " is not 0, 1, 2 or 3");
  }
}

void check_context_parallel(const ParallelPlan& plan) {
  if (plan.cp < 1)
    throw PlanError("--context-parallel-size " + std::to_string(plan.cp) + " must be >= 1");
  // 2 x cp in 64 bits: cp 1073741824 used to print "= -2147483648".
  const long long chunks = 2LL * plan.cp;
  if (plan.cp > 1 && plan.seq_length % chunks != 0)
    throw PlanError("--seq-length " + std::to_string(plan.seq_length) +
                    " is not divisible by 2 x context-parallel size " + std::to_string(plan.cp) +
                    " = " + std::to_string(chunks) +
                    " (causal load balancing gives each context-parallel rank two of 2 x cp "
                    "equal chunks of every sequence)");
}

}  // namespace hetsim

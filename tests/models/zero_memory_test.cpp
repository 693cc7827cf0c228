// Static memory by ZeRO stage against Rajbhandari et al., "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", SC'20, section 5 and Figure 1: with Psi parameters,
// N_d data-parallel GPUs and K bytes/param of optimizer state,
//   baseline (2 + 2 + K) Psi;  P_os 4 Psi + K Psi/N_d;  P_os+g 2 Psi + (2 + K) Psi/N_d;
//   P_os+g+p (2 + 2 + K) Psi/N_d.
// The paper keeps fp16 gradients (2 B); Megatron-LM keeps an fp32 main-grad buffer (4 B),
// hetsim's default layout, tested separately.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.hpp"
#include "models/chunk_cost.hpp"
#include "model_test_support.hpp"

namespace {
using hetsim::test::rel;
double round_to_tenth_gb(double bytes) { return std::round(bytes / 1e8) / 10; }
std::string plan_error_of(const hetsim::ParallelPlan& plan) {
  try {
    hetsim::static_memory(1e9, 1e9, plan);
  } catch (const hetsim::PlanError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("ZeRO Figure 1: 7.5B parameters, N_d = 64, K = 12, fp16 gradients: 120, 31.4, 16.6, 1.9 GB") {
  const double psi = 7.5e9, nd = 64, K = 12;
  const hetsim::BytesPerParam paper{2, 2, 12};
  hetsim::ParallelPlan plan;
  plan.dp = 64;
  const double expected[] = {(2 + 2 + K) * psi, 4 * psi + K * psi / nd, 2 * psi + (2 + K) * psi / nd,
                             (2 + 2 + K) * psi / nd};
  const double published_gb[] = {120, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    plan.zero_stage = stage;
    const double actual = hetsim::static_memory(psi, 0, plan, paper).total();
    MESSAGE("stage " << stage << ": expected " << expected[stage] / 1e9 << " GB (Figure 1: "
                     << published_gb[stage] << " GB), actual " << actual / 1e9 << " GB");
    CHECK(rel(actual, expected[stage]) < 1e-12);
    CHECK(round_to_tenth_gb(actual) == published_gb[stage]);
  }
}

TEST_CASE("Megatron layout (bf16 weights, fp32 main grads, 12 B Adam): 18, 6 + 12/d, 2 + 16/d, 18/d bytes/param") {
  const double psi = 1e9, d = 8;
  hetsim::ParallelPlan plan;
  plan.dp = 8;
  const double per_param[] = {18, 6 + 12 / d, 2 + 16 / d, 18 / d};
  for (int stage = 0; stage <= 3; ++stage) {
    plan.zero_stage = stage;
    const auto m = hetsim::static_memory(psi, plan);
    MESSAGE("stage " << stage << ": expected " << per_param[stage] << " B/param, actual " << m.total() / psi);
    CHECK(rel(m.total(), per_param[stage] * psi) < 1e-12);
  }
  plan.zero_stage = 2;
  const auto m = hetsim::static_memory(psi, plan);
  CHECK(m.weights_bytes == 2 * psi);
  CHECK(m.gradients_bytes == 4 * psi / d);
  CHECK(m.optimizer_bytes == 12 * psi / d);
}

TEST_CASE("distributed_optimizer means stage 1; a higher zero_stage wins") {
  hetsim::ParallelPlan plan;
  plan.dp = 4;
  CHECK(plan.effective_zero_stage() == 0);
  plan.distributed_optimizer = true;
  CHECK(plan.effective_zero_stage() == 1);
  CHECK(hetsim::static_memory(1e9, plan).total() == (6 + 12.0 / 4) * 1e9);
  plan.zero_stage = 3;
  CHECK(plan.effective_zero_stage() == 3);
  CHECK(hetsim::static_memory(1e9, plan).total() == 18e9 / 4);
}

TEST_CASE("expert parameters shard over the expert-data-parallel group, dp / ep") {
  hetsim::ParallelPlan plan;
  plan.dp = 16;
  plan.ep = 4;  // an expert's weights are on 16 / 4 = 4 replicas
  const double dense = 2e9, experts = 8e9;
  plan.zero_stage = 1;
  auto m = hetsim::static_memory(dense, experts, plan);
  CHECK(m.optimizer_bytes == 12 * (dense / 16 + experts / 4));
  CHECK(m.gradients_bytes == 4 * (dense + experts));
  plan.zero_stage = 3;
  m = hetsim::static_memory(dense, experts, plan);
  CHECK(rel(m.total(), 18 * (dense / 16 + experts / 4)) < 1e-12);
  plan.zero_stage = 0;
  CHECK(hetsim::static_memory(dense, experts, plan).total() == 18 * (dense + experts));
}

TEST_CASE("ZeRO stage and ep out of range are PlanErrors") {
  hetsim::ParallelPlan plan;
  plan.dp = 16;
  plan.zero_stage = 4;
  CHECK(plan_error_of(plan) == "ZeRO stage 4 is not 0, 1, 2 or 3");
  plan.zero_stage = 1;
  plan.ep = 3;
  CHECK(plan_error_of(plan) == "expert parallelism 3 must divide data parallelism 16 (expert-parallel "
                               "groups are made of data-parallel replicas)");
  plan.ep = 0;
  CHECK(plan_error_of(plan) == "dp and ep must be >= 1");
}

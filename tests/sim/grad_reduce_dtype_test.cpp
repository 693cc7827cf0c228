// Gradient reduction follows Megatron's precision rules: bf16 keeps fp32 main grads and reduces
// 4 bytes per parameter (arguments.py forces accumulate_allreduce_grads_in_fp32 for bf16); fp16
// reduces its 2-byte gradients unless --accumulate-allreduce-grads-in-fp32. Bytes per GPU as
// nccl-tests sizes a collective: parameters x bytes per gradient.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "sim/data_parallel_sync.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {

// One DGX A100 node, dp 8: one all-reduce (ZeRO-0) or reduce-scatter (distributed optimizer) of a
// rank's 1e9 parameters.
double gradient_bytes(Dtype dtype, bool fp32_grads, bool distributed) {
  static const Cluster cluster =
      load_cluster(std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/dgx-a100-1node.json", {"a100-80gb"});
  ParallelPlan plan;
  plan.dp = 8;
  plan.dtype = dtype;
  plan.accumulate_allreduce_grads_in_fp32 = fp32_grads;
  plan.distributed_optimizer = distributed;
  ChunkCost chunk;
  chunk.params = 1e9;
  const std::vector<std::vector<ChunkCost>> costs(8, std::vector<ChunkCost>{chunk});
  const auto sync = data_parallel_sync(cluster, plan, Placement{1, 1, 8}, costs, {});
  REQUIRE(sync.size() == 1);
  REQUIRE(sync[0].gradients.size() == 1);
  if (distributed) {
    // The distributed optimizer gathers updated 2-byte weights whatever the gradient dtype.
    REQUIRE(sync[0].parameters.size() == 1);
    CHECK(sync[0].parameters[0].bytes == 2e9);
  }
  return sync[0].gradients[0].bytes;
}

}  // namespace

TEST_CASE("gradient collectives carry fp32 for bf16 and 2-byte gradients for fp16") {
  for (const bool distributed : {false, true}) {
    const double bf16 = gradient_bytes(Dtype::kBf16, false, distributed);
    const double fp16 = gradient_bytes(Dtype::kFp16, false, distributed);
    const double fp16_fp32 = gradient_bytes(Dtype::kFp16, true, distributed);
    std::printf("1e9 params, %s: bf16 expected 4e9 B got %g B; fp16 expected 2e9 B got %g B; fp16 with "
                "--accumulate-allreduce-grads-in-fp32 expected 4e9 B got %g B\n",
                distributed ? "reduce-scatter" : "all-reduce", bf16, fp16, fp16_fp32);
    CHECK(bf16 == 4e9);
    CHECK(fp16 == 2e9);
    CHECK(fp16_fp32 == 4e9);
  }
}

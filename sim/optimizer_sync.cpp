#include "sim/optimizer_sync.hpp"

#include <algorithm>
#include <vector>

namespace hetsim {

namespace {

// 2 x the longest route latency from the group's first GPU, looked up once per node (a node's
// GPUs share their route out of it; the first GPU's own node costs its intra-node latency).
double reduce_and_broadcast_s(const Cluster& cluster, const std::vector<GpuId>& group) {
  const GpuId root = group.front();
  std::vector<char> node_seen(static_cast<std::size_t>(cluster.node_count()), 0);
  double farthest = 0;
  for (const GpuId gpu : group) {
    if (gpu == root) continue;
    const int node = cluster.gpu(gpu).node;
    if (node != cluster.gpu(root).node) {
      if (node_seen[node]) continue;
      node_seen[node] = 1;
    }
    farthest = std::max(farthest, cluster.route_latency_s(root, gpu));
  }
  return 2 * farthest;
}

}  // namespace

OptimizerSync optimizer_sync(const Cluster& cluster, const ParallelPlan& plan, const Placement& placement) {
  OptimizerSync sync;
  sync.all_reduces = plan.dtype == Dtype::kFp16 ? 2 : 1;  // found-inf flag, then the norm
  std::vector<std::vector<GpuId>> groups;
  if (plan.effective_zero_stage() >= 1) {
    std::vector<GpuId> world;
    for (int w = 0; w < placement.workers(); ++w)
      for (const GpuId gpu : placement.worker_gpus(w)) world.push_back(gpu);
    groups.push_back(std::move(world));
  } else {
    for (int replica = 0; replica < placement.dp; ++replica) {
      std::vector<GpuId> model_parallel;
      for (int rank = 0; rank < placement.pp; ++rank)
        for (const GpuId gpu : placement.tensor_parallel_gpus(replica * placement.pp + rank))
          model_parallel.push_back(gpu);
      groups.push_back(std::move(model_parallel));
    }
  }
  for (const auto& group : groups) {
    if (group.size() < 2) continue;
    sync.across_ranks = true;
    sync.seconds = std::max(sync.seconds, sync.all_reduces * reduce_and_broadcast_s(cluster, group));
  }
  return sync;
}

}  // namespace hetsim

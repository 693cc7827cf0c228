#include "sim/rank_pair_syncs.hpp"

#include <set>

#include "models/precision.hpp"
#include "sim/data_parallel_sync.hpp"

namespace hetsim {

namespace {

// The ranks holding virtual stage `stage` (more than one under DualPipe's two directions).
std::set<int> ranks_holding(const Timetable& timetable, int stage) {
  std::set<int> ranks;
  for (int rank = 0; rank < timetable.ranks; ++rank)
    for (int s : timetable.stage_of[rank])
      if (s == stage) ranks.insert(rank);
  return ranks;
}

// An all-reduce of `bytes` per GPU between ranks `a` and `b`: one 2-GPU ring for each replica's
// GPUs of the same tensor- (and context-) parallel index on the two ranks.
RankPairAllReduce rank_pair_all_reduce(const Cluster& cluster, const Placement& placement, int a, int b,
                                       double bytes, double wan_compression) {
  RankPairAllReduce pair;
  pair.ranks[0] = a;
  pair.ranks[1] = b;
  std::vector<std::vector<GpuId>> rings;
  for (int replica = 0; replica < placement.dp; ++replica) {
    const std::vector<GpuId> first = placement.worker_gpus(replica * placement.pp + a);
    const std::vector<GpuId> second = placement.worker_gpus(replica * placement.pp + b);
    for (std::size_t i = 0; i < first.size(); ++i) rings.push_back({first[i], second[i]});
  }
  const RingGroup group = ring_group(cluster, rings, wan_compression);
  pair.rings = group.hops;
  pair.collective = group_collective(group, 0, CollectiveOp::kAllReduce, bytes, 0, 1);
  return pair;
}

}  // namespace

RankPairAllReduce tied_embedding_all_reduce(const Cluster& cluster, const TransformerConfig& model,
                                            const ParallelPlan& plan, const Placement& placement,
                                            const Timetable& timetable, double wan_compression) {
  // Multi-token prediction keeps a copy of the embedding on the LM head's stage too.
  if (!model.tied_embeddings && model.mtp_depth == 0) return {};
  const std::set<int> embedding = ranks_holding(timetable, 0);
  const std::set<int> lm_head = ranks_holding(timetable, timetable.stages() - 1);
  if (embedding.size() != 1 || lm_head.size() != 1 || *embedding.begin() == *lm_head.begin()) return {};
  const double elements = static_cast<double>(model.vocab_size) / plan.tp * model.hidden_size;
  return rank_pair_all_reduce(cluster, placement, *embedding.begin(), *lm_head.begin(),
                              elements * bytes_per_param(plan).gradients, wan_compression);
}

std::vector<RankPairAllReduce> mirrored_copy_all_reduces(const Cluster& cluster, const ParallelPlan& plan,
                                                         const Placement& placement, const Timetable& timetable,
                                                         const std::vector<int>& slice_of_stage,
                                                         const std::vector<std::vector<ChunkCost>>& chunk_costs,
                                                         double wan_compression) {
  std::vector<RankPairAllReduce> pairs;
  if (timetable.paths.empty()) return pairs;  // one direction: one copy of every slice
  const bool sharded = plan.effective_zero_stage() >= 1;
  const double gradient_bytes = bytes_per_param(plan).gradients;
  for (int a = 0; a < timetable.ranks; ++a) {
    for (int b = a + 1; b < timetable.ranks; ++b) {
      double bytes = 0;
      for (std::size_t chunk = 0; chunk < timetable.stage_of[a].size(); ++chunk) {
        const int slice = slice_of_stage[timetable.stage_of[a][chunk]];
        bool shared = false;
        for (const int stage : timetable.stage_of[b]) shared = shared || slice_of_stage[stage] == slice;
        if (!shared) continue;
        const ChunkCost& cost = chunk_costs[a][chunk];
        const double dense = cost.params - cost.expert_params;
        bytes += sharded ? dense / plan.data_parallel_with_context() + cost.expert_params / plan.expert_data_parallel()
                         : cost.params;
      }
      if (bytes > 0)
        pairs.push_back(rank_pair_all_reduce(cluster, placement, a, b, bytes * gradient_bytes, wan_compression));
    }
  }
  return pairs;
}

}  // namespace hetsim

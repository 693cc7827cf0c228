#include "sim/tied_embedding_sync.hpp"

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

}  // namespace

TiedEmbeddingSync tied_embedding_sync(const Cluster& cluster, const TransformerConfig& model, const ParallelPlan& plan,
                                      const Placement& placement, const Timetable& timetable, double wan_compression) {
  TiedEmbeddingSync sync;
  // Multi-token prediction keeps a copy of the embedding on the LM head's stage too.
  if (!model.tied_embeddings && model.mtp_depth == 0) return sync;
  const std::set<int> embedding = ranks_holding(timetable, 0);
  const std::set<int> lm_head = ranks_holding(timetable, timetable.stages() - 1);
  if (embedding.size() != 1 || lm_head.size() != 1 || *embedding.begin() == *lm_head.begin()) return sync;
  sync.embedding_rank = *embedding.begin();
  sync.lm_head_rank = *lm_head.begin();
  std::vector<std::vector<GpuId>> rings;
  for (int replica = 0; replica < placement.dp; ++replica) {
    const std::vector<GpuId> first = placement.worker_gpus(replica * placement.pp + sync.embedding_rank);
    const std::vector<GpuId> last = placement.worker_gpus(replica * placement.pp + sync.lm_head_rank);
    for (std::size_t i = 0; i < first.size(); ++i) rings.push_back({first[i], last[i]});
  }
  const RingGroup group = ring_group(cluster, rings, wan_compression);
  sync.rings = group.hops;
  const double elements = static_cast<double>(model.vocab_size) / plan.tp * model.hidden_size;
  sync.collective = group_collective(group, 0, CollectiveOp::kAllReduce, elements * bytes_per_param(plan).gradients, 0, 1);
  return sync;
}

}  // namespace hetsim

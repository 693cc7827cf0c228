#pragma once
// The gradient all-reduces between pairs of pipeline ranks holding the same weights
// (sim/rank_sync.hpp's RankPairAllReduce), run before either rank steps its optimizer.
#include <vector>

#include "models/chunk_cost.hpp"
#include "models/parallel_plan.hpp"
#include "models/transformer_config.hpp"
#include "schedules/timetable.hpp"
#include "sim/placement.hpp"
#include "sim/rank_sync.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// Megatron-LM's embedding group: the rank whose first model chunk holds the input embedding and
// the rank whose last holds the LM head, for tied embeddings and for a model with multi-token
// prediction (whose modules on the last stage look up the embedding). Inactive when neither
// applies, or one rank holds both stages (pp 1, V-shaped schedules), or either stage lives on more
// than one rank (DualPipe's two directions, where mirrored_copy_all_reduces covers them). Bytes
// per GPU: the embedding table's tensor-parallel shard, vocab / tp x hidden elements of the
// main-gradient dtype (fp32, or fp16 for fp16 runs reducing in fp16), the whole table whatever
// the ZeRO stage, as Megatron all-reduces the whole main-grad tensor.
RankPairAllReduce tied_embedding_all_reduce(const Cluster& cluster, const TransformerConfig& model,
                                            const ParallelPlan& plan, const Placement& placement,
                                            const Timetable& timetable, double wan_compression);

// Bidirectional schedules (DualPipe) put every model slice on two ranks: rank i and rank p-1-i
// hold the same two slices, each training its copy on half the microbatches, and each adds the
// other's gradients into its own before the optimizer step (deepseek-ai/DualPipe's example).
// One all-reduce per such pair of ranks, of the gradients of every chunk whose slice both hold:
// `chunk_costs[worker][chunk]` (replica 0's workers are 0..p-1, one per rank) gives each chunk's
// parameters on one GPU, in the main-gradient dtype; with the distributed optimizer (ZeRO >= 1) the data-parallel reduce-scatter has left
// each GPU its shard (dense weights over dp x cp, routed experts over dp x cp / ep), so only the
// shard is exchanged. None for schedules that keep one copy of each slice.
std::vector<RankPairAllReduce> mirrored_copy_all_reduces(const Cluster& cluster, const ParallelPlan& plan,
                                                         const Placement& placement, const Timetable& timetable,
                                                         const std::vector<int>& slice_of_stage,
                                                         const std::vector<std::vector<ChunkCost>>& chunk_costs,
                                                         double wan_compression);

}  // namespace hetsim

#pragma once
// The tied word-embedding gradient all-reduce of a plan (sim/rank_sync.hpp's TiedEmbeddingSync),
// between the pipeline rank whose first model chunk holds the input embedding and the rank whose
// last holds the LM head, as Megatron-LM's embedding group runs it: for tied embeddings, and for
// a model with multi-token prediction, whose modules on the last stage look up the embedding.
#include "models/parallel_plan.hpp"
#include "models/transformer_config.hpp"
#include "schedules/timetable.hpp"
#include "sim/placement.hpp"
#include "sim/rank_sync.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// None when the model's embeddings are untied and it has no multi-token prediction, or one rank holds both stages (pp 1, V-shaped
// schedules), or either stage lives on more than one rank (DualPipe's two directions). Its bytes
// per GPU: the embedding table's tensor-parallel shard, vocab / tp x hidden elements of the
// main-gradient dtype (fp32, or fp16 for fp16 runs reducing in fp16), the whole table whatever
// the ZeRO stage, as Megatron all-reduces the whole main-grad tensor.
TiedEmbeddingSync tied_embedding_sync(const Cluster& cluster, const TransformerConfig& model, const ParallelPlan& plan,
                                      const Placement& placement, const Timetable& timetable, double wan_compression);

}  // namespace hetsim

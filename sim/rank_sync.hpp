#pragma once
// What the replay needs to simulate one pipeline rank's data-parallel collectives: the rings its
// replicas reduce and gather over, its gradient buckets in launch order, and the weights its ops
// wait for (ZeRO-3, --overlap-param-gather). Built by sim/data_parallel_sync.hpp; run by
// sim/gradient_sync.hpp and sim/weight_gathers.hpp on a sim/collective_launcher.hpp.
#include <span>
#include <vector>

#include "sim/collectives/collective.hpp"

namespace hetsim {

// One hop of a ring: the route from a GPU to its successor, the share of the collective's bytes
// it puts on the wire (1 / the ring's channels, divided by the compression ratio across a
// compressed WAN link) and the route's latency.
struct RingHop {
  std::span<const int> route;  // into the cluster's route cache (Cluster::route)
  double wire_share = 1;
  double latency_s = 0;
};
using RingHops = std::vector<RingHop>;  // n hops for a ring of n GPUs

// One bucket's collective over the data-parallel groups of a pipeline rank.
struct BucketCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;  // all-reduce, reduce-scatter or all-gather
  double bytes = 0;          // per GPU, as nccl-tests sizes it
  int chunk = 0;             // model chunk on the rank whose gradients it carries
  double ready_fraction = 1; // share of the chunk's last gradient op after which they are complete
  int group = 0;             // index into RankSync::groups
  double alpha_beta_s = 0;   // its time on the alpha-beta path
};

// A unit of a chunk's gathered weights: the collectives that bring it (dense weights, then
// routed-expert weights) and the share of an op's compute that runs on it.
struct GatherUnit {
  std::vector<BucketCollective> collectives;
  double compute_share = 0;
};

struct RankSync {
  // [group] -> the rings that run together for one collective (one per tensor-parallel index, and
  // per expert-parallel index for expert weights, each on its channels), each with n >= 2 hops.
  std::vector<std::vector<RingHops>> groups;
  std::vector<BucketCollective> gradients;   // launch order
  std::vector<BucketCollective> parameters;  // all-gathers after the optimizer step
  // --overlap-grad-reduce: buckets launch during the last microbatch's backward.
  bool overlap = false;
  // ZeRO-2 and 3: gradients are sharded, not accumulated whole, so every microbatch's backward
  // reduce-scatters its buckets (as it produces them), not only the last one's.
  bool every_microbatch = false;
  // [chunk] -> the units its gathered ops compute on, in forward order: with ZeRO-3 its layers,
  // gathered before each of its forward and backward ops; with --overlap-param-gather the
  // distributed optimizer's buckets, before its first forward only. A chunk with none is empty.
  std::vector<std::vector<GatherUnit>> chunk_gathers;
  bool gather_before_every_op = false;  // ZeRO-3; else the first forward only
};

// Weights two pipeline ranks both hold, whose gradients the ranks all-reduce with each other:
// after both have reduced their data-parallel gradients, each replica's GPUs of the same tensor-
// (and context-) parallel index on the two ranks all-reduce them, and neither rank steps its
// optimizer before it is done. Megatron-LM's tied word embeddings (the input embedding's rank and
// the LM head's; finalize_model_grads, _allreduce_word_embedding_grads) and DualPipe's two copies
// of the parameters (rank i and rank p-1-i hold the same two model slices; deepseek-ai/DualPipe
// adds each copy's gradients into the other's before the step).
struct RankPairAllReduce {
  int ranks[2] = {-1, -1};      // ranks[0] < 0: no such all-reduce
  std::vector<RingHops> rings;  // one 2-GPU ring per pair of GPUs, on its channels
  BucketCollective collective;  // over `rings`
  bool active() const { return ranks[0] >= 0; }
};

}  // namespace hetsim

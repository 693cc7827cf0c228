#pragma once
// Ring collectives costed on the real routes of a cluster (alpha-beta on the ring's bottleneck):
// all-reduce of S bytes over n ranks takes 2(n-1)/n * S/B + 2(n-1) * L, reduce-scatter and
// all-gather half of each term, where B is the smallest bandwidth share any ring hop gets and L the
// largest hop latency. Several rings that run at the same time (the tensor-parallel ranks of one
// pipeline stage reduce their gradients together) share the links their hops cross equally.
#include <utility>
#include <vector>

#include "models/chunk_cost.hpp"
#include "sim/collectives/collective.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct RingBottleneck {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  int ranks = 1;
};

// `rings` lists concurrent rings, each the GPUs in ring order. Bytes crossing wide-area links are
// compressed by `wan_compression` (>= 1), which makes those links that much faster for the ring.
RingBottleneck ring_bottleneck(const Cluster& cluster, const std::vector<std::vector<GpuId>>& rings,
                               double wan_compression = 1);

// Equal messages sent at once, each from a pair's first GPU to its second: the slowest route's
// latency and the smallest share of a link any of them gets (the link's bandwidth over the
// routes crossing it). `ranks` is the number of pairs.
RingBottleneck pairs_bottleneck(const Cluster& cluster,
                                const std::vector<std::pair<GpuId, GpuId>>& pairs);

// The links a tensor-parallel group's collectives run on: the bottleneck of the ring through
// `gpus` in order, NVLink inside a node, the NICs and the fabric for a group that spans nodes.
// One GPU: its node's intra-node figures.
TensorParallelLinks tensor_parallel_links(const Cluster& cluster, const std::vector<GpuId>& gpus);

double ring_all_reduce_s(const RingBottleneck& ring, double bytes);
double ring_reduce_scatter_s(const RingBottleneck& ring, double bytes);  // also all-gather

// A ring collective in steady state: the bytes each hop carries (all-reduce 2(n-1)/n * S,
// reduce-scatter and all-gather (n-1)/n * S) and the ring steps whose hop latency a chunk meets
// (2(n-1), n-1). Zero for fewer than two ranks; throws SimulationError for other collectives.
struct RingLoad {
  double hop_bytes = 0;
  int steps = 0;
};
RingLoad ring_load(CollectiveOp op, int ranks, double bytes);

}  // namespace hetsim

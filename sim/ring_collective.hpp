#pragma once
// Ring collectives costed on the real routes of a cluster (alpha-beta on the ring's bottleneck):
// all-reduce of S bytes over n ranks takes 2(n-1)/n * S/B + 2(n-1) * L, reduce-scatter and
// all-gather half of each term, where B is the smallest bandwidth share any ring hop gets and L the
// largest hop latency. Several rings that run at the same time (the tensor-parallel ranks of one
// pipeline stage reduce their gradients together) share the links their hops cross equally.
#include <vector>

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

double ring_all_reduce_s(const RingBottleneck& ring, double bytes);
double ring_reduce_scatter_s(const RingBottleneck& ring, double bytes);  // also all-gather

// Bytes each hop of one ring carries in an all-reduce of `bytes`: 2(n-1)/n * S.
double ring_all_reduce_hop_bytes(int ranks, double bytes);

}  // namespace hetsim

#pragma once
// The alpha-beta fast path: collectives costed by closed forms on the group's routes, with no
// events. B is the smallest bandwidth share a hop gets when the concurrent hops of a phase share
// links (ring_bottleneck), L the mean hop latency around the ring (a chunk meets each hop's own
// latency as it travels; steps are not barriers); n ranks, S bytes (nccl-tests sizes).
//   ring all-reduce       2(n-1)/n * S/B + 2(n-1) L      (Patarasuk & Yuan 2009; DESIGN.md)
//   ring reduce-scatter,  (n-1)/n * S/B + (n-1) L
//   all-gather            on k channels (ring_channels, collective_plan.hpp) S is S/k and B the
//                         smallest share any hop of any channel gets
//   broadcast (chain)     sum over hops of (c/B_j + L_j) + (k-1) c / min_j B_j, for k pipeline
//                         chunks of c = S/k bytes
//   send                  L + S/B on the route
//   all-to-all            max over links of (bytes crossing it / its bandwidth) + largest route L
//   tree all-reduce       max over links of (bytes crossing it / its bandwidth), each tree edge
//                         carrying S/2 up and S/2 down, + one chunk's round trip on the deepest
//                         path (drain and latency per edge, up and down)
//   hierarchical          intra-node ring phases at (B_i, L_i) of g GPUs plus the inter-node ring
//                         of S/g over m nodes at (B_n, L_n); all-reduce:
//                         2(g-1)/g S/B_i + 2(g-1) L_i + 2(m-1)/m (S/g)/B_n + 2(m-1) L_n
// Exact for uniform rings; what it misses elsewhere (uneven hops, contention the bottleneck share
// does not capture) is measured against the flow simulation in tests/sim/collectives_test.cpp.
#include <vector>

#include "sim/collectives/collective.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

double alpha_beta_collective_s(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                               const std::vector<GpuId>& gpus, double bytes);

}  // namespace hetsim

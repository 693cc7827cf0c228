#pragma once
// Ring collectives of a tensor-parallel group on its links (alpha-beta model): for n ranks, a
// message of S bytes, per-GPU bandwidth B per direction and per-step latency L,
//   all-reduce                   2(n-1)/n * S/B + 2(n-1) L
//   all-gather / reduce-scatter    (n-1)/n * S/B +  (n-1) L
// S is the whole tensor (the all-gather output, the reduce-scatter input). One rank costs 0.
#include "models/chunk_cost.hpp"

namespace hetsim {

double ring_all_reduce_s(double bytes, int ranks, const TensorParallelLinks& links);
double ring_all_gather_s(double bytes, int ranks, const TensorParallelLinks& links);
double ring_reduce_scatter_s(double bytes, int ranks, const TensorParallelLinks& links);

}  // namespace hetsim

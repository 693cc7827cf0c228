#pragma once
// Ring collectives of a tensor-parallel group on its links (alpha-beta model): for n ranks, a
// message of S bytes, per-GPU bandwidth B per direction and per-step latency L,
//   all-reduce                   2(n-1)/n * S/B + 2(n-1) L
//   all-gather / reduce-scatter    (n-1)/n * S/B +  (n-1) L
// S is the whole tensor (the all-gather output, the reduce-scatter input). One rank costs 0.
#include "models/calibration/profile.hpp"
#include "models/chunk_cost.hpp"
#include "models/op_cost.hpp"

namespace hetsim {

double ring_all_reduce_s(double bytes, int ranks, const TensorParallelLinks& links);
double ring_all_gather_s(double bytes, int ranks, const TensorParallelLinks& links);
double ring_reduce_scatter_s(double bytes, int ranks, const TensorParallelLinks& links);

enum class TpCollective { kAllReduce, kAllGather, kReduceScatter };
// The profile's name of a collective ("all_reduce", "all_gather", "reduce_scatter").
const char* profile_name(TpCollective op);

// One tensor-parallel collective of `bytes` (the whole tensor, as nccl-tests' "size" counts it)
// over `ranks` GPUs: Profile::collective_seconds when the profile measured that collective (on
// its own node's GPUs), else the ring formula on `links`. One rank: no collective (0 s, no source).
PassCost tp_collective_cost(TpCollective op, double bytes, int ranks,
                            const TensorParallelLinks& links, const calibration::Profile* profile);

}  // namespace hetsim

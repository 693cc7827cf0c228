#pragma once
// The collectives hetsim simulates, named as NCCL names them, and the bandwidth figures
// nccl-tests reports for them (nccl-tests doc/PERFORMANCE.md, https://github.com/NVIDIA/nccl-tests):
//   algbw = S / t, with S the "size" nccl-tests prints: the buffer each rank holds in full
//           (all-reduce: in and out; all-gather: the gathered output; reduce-scatter: the input
//           before scattering; all-to-all: all a rank sends; broadcast and send: the message);
//   busbw = algbw * factor, the factor making busbw comparable to a link's bandwidth:
//           all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, send 1.
#include <string>
#include <vector>

namespace hetsim {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSend };
enum class CollectiveAlgo { kRing, kTree, kHierarchical };

const char* to_string(CollectiveOp op);
const char* to_string(CollectiveAlgo algo);
// Parses "all-reduce", "reduce-scatter", ... / "ring", "tree", "hierarchical"; throws Error
// naming `what` (the flag or field) and the accepted words.
CollectiveOp parse_collective_op(const std::string& text, const std::string& what);
CollectiveAlgo parse_collective_algo(const std::string& text, const std::string& what);

// nccl-tests' bus bandwidth factor for `ranks` ranks.
double bus_bandwidth_factor(CollectiveOp op, int ranks);

}  // namespace hetsim

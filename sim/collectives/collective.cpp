#include "sim/collectives/collective.hpp"

#include "base/error.hpp"

namespace hetsim {

namespace {
constexpr CollectiveOp kOps[] = {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter,
                                 CollectiveOp::kAllGather, CollectiveOp::kAllToAll,
                                 CollectiveOp::kBroadcast, CollectiveOp::kSend};
constexpr CollectiveAlgo kAlgos[] = {CollectiveAlgo::kRing, CollectiveAlgo::kTree,
                                     CollectiveAlgo::kHierarchical};
}  // namespace

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all-reduce";
    case CollectiveOp::kReduceScatter: return "reduce-scatter";
    case CollectiveOp::kAllGather: return "all-gather";
    case CollectiveOp::kAllToAll: return "all-to-all";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kSend: return "send";
  }
  return "unknown";
}

const char* to_string(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::kRing: return "ring";
    case CollectiveAlgo::kTree: return "tree";
    case CollectiveAlgo::kHierarchical: return "hierarchical";
  }
  return "unknown";
}

CollectiveOp parse_collective_op(const std::string& text, const std::string& what) {
  for (CollectiveOp op : kOps)
    if (text == to_string(op)) return op;
  throw Error(what + ": got \"" + text +
              "\"; expected all-reduce, reduce-scatter, all-gather, all-to-all, broadcast or send");
}

CollectiveAlgo parse_collective_algo(const std::string& text, const std::string& what) {
  for (CollectiveAlgo algo : kAlgos)
    if (text == to_string(algo)) return algo;
  throw Error(what + ": got \"" + text + "\"; expected ring, tree or hierarchical");
}

double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSend: return 1;
  }
  return 1;
}

}  // namespace hetsim

#pragma once
// A collective as a graph of point-to-point transfers on the cluster's real routes: each transfer
// starts once its dependencies are met, so a rank forwards a chunk only after receiving it and
// sends its next chunk only after the previous one has left it. The algorithms:
//   ring          reduce-scatter / all-gather: n-1 steps of S/n around the ring (all-reduce: both),
//                 split over the ring's channels (ring_channels: one per NIC of a node);
//                 broadcast: a chain from the first GPU, pipelined in chunks; all-to-all: every
//                 pair at once, S/n each; send: one message from the first GPU to the second.
//   tree          all-reduce on NCCL's double binary tree (Sanders, Speck & Traeff 2009): two
//                 trees carry half the data each, pipelined in chunks, reduced up then broadcast
//                 down; the second tree is the first shifted by one rank.
//   hierarchical  all-reduce = ring reduce-scatter inside each node, ring all-reduce of S/g
//                 across nodes among GPUs of the same local index, ring all-gather inside each
//                 node (g GPUs per node); reduce-scatter and all-gather use the matching halves.
#include <cstdint>
#include <vector>

#include "sim/collectives/collective.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// A dependency: transfer `transfer` delivered (its last byte arrived) or only drained (its last
// byte left the sender, so the sender's links are free for its next message).
struct TransferDependency {
  std::uint64_t transfer = 0;
  bool drained_only = false;
};

struct Transfer {
  GpuId src = 0;
  GpuId dst = 0;
  double bytes = 0;
  std::vector<TransferDependency> after;
};

// `steps` ring steps on each of `rings` (all of one size n), which run at the same time: in step
// k every GPU sends `bytes` to its successor, what it received from its predecessor in step k-1
// (reduce-scatter and all-gather move alike). Its transfers are not stored, since a flat ring
// over thousands of GPUs has hundreds of millions of them: transfer (r, k, i), from rings[r][i]
// to rings[r][(i+1) % n], has id first_id + (r * steps + k) * n + i and waits for (r, k-1, i-1)
// delivered and (r, k-1, i) drained; in step 0 for first_after[r][i] (transfers of earlier
// phases, what the GPU already had to do).
struct RingPhase {
  std::uint64_t first_id = 0;
  std::vector<std::vector<GpuId>> rings;
  int steps = 0;
  double bytes = 0;
  std::vector<std::vector<std::vector<TransferDependency>>> first_after;  // by ring, position
  std::uint64_t transfer_count() const;
};

// Stored transfers have ids 0 .. transfers.size()-1; ring phases follow them, in order (their
// first_id counts on from there), and never precede a stored transfer.
struct CollectivePlan {
  std::vector<Transfer> transfers;
  std::vector<RingPhase> ring_phases;
  std::uint64_t transfer_count() const;
};

// Pipelined algorithms (tree, broadcast) cut the message into chunks of one NCCL buffer:
// NCCL_BUFFSIZE defaults to 4 MiB (NCCL user guide, "Environment Variables",
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html), with at most this many
// chunks so a very large message does not explode the event count.
inline constexpr double kPipelineChunkBytes = 4.0 * 1024 * 1024;
inline constexpr int kMaxPipelineChunks = 64;

// The most stored transfers a flow simulation is built for (trees, broadcasts, all-to-all,
// sends). Each costs about 210 bytes across the plan, its dependency lists and the network's
// flow state (measured with `hetsim collective --cluster topologies/clusters/dgx-h100-2048node.json
// --gpus 256` when ring transfers were stored too: 1,044,480 transfers, 215 MiB peak resident),
// so the bound keeps the process under 1 GiB; beyond it the alpha-beta closed form answers.
inline constexpr double kMaxFlowTransfers = 5e6;

// The most transfers of ring phases. They are generated as their steps start, so memory grows
// with the rings' GPUs, not with the transfers (a 4,096-GPU flat ring all-reduce on one channel,
// 33.5 million transfers, peaks at 30 MiB and takes 25-33 s: BENCHMARKS.md); the bound is one of
// time, about nine times that: several minutes. The 4,096-GPU ring on a DGX H100's 8 channels
// (268 million transfers) is within it.
inline constexpr double kMaxRingTransfers = 3e8;

// How many transfers plan_collective builds for these arguments, computed without building them
// (after check_collective has accepted them).
double planned_transfer_count(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                              const std::vector<GpuId>& gpus, double bytes);

// Builds the transfers of `op` with `algo` over `gpus` (in ring order; the first GPU is the root
// of a broadcast and the sender of a send) for a message of `bytes` as nccl-tests sizes it
// (collective.hpp). Throws Error for a combination that does not exist (tree only does
// all-reduce, as in NCCL; hierarchical needs the same number of the group's GPUs in every node)
// and, before allocating anything, for a plan of more than kMaxFlowTransfers stored transfers or
// kMaxRingTransfers ring-phase transfers.
CollectivePlan plan_collective(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                               const std::vector<GpuId>& gpus, double bytes);

// The checks plan_collective makes, for the alpha-beta path to refuse the same inputs.
void check_collective(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                      const std::vector<GpuId>& gpus, double bytes);

// The group's GPUs by node, in order of first appearance; throws Error unless every node holds
// the same number of them.
std::vector<std::vector<GpuId>> gpus_by_node(const Cluster& cluster, const std::vector<GpuId>& gpus);

// The rings ("channels") a ring collective over `ring` runs on, each carrying an equal share of
// the bytes, as NCCL does to use every NIC of a node: when the ring visits several nodes, the
// same number g >= 2 of GPUs in each and each node's GPUs one after another, there are g rings,
// ring c visiting each node's GPUs rotated by c (x_c, ..., x_{g-1}, x_0, ..., x_{c-1}). Ring c
// leaves a node from x_{c-1} and enters the next at x_c, so every GPU's NIC carries one ring
// each way and a node's inter-node traffic spreads over all g NICs instead of one. Otherwise
// the ring itself is the only channel.
std::vector<std::vector<GpuId>> ring_channels(const Cluster& cluster, const std::vector<GpuId>& ring);

// Parent of each position in the balanced in-order binary tree over positions 0..n-1 (-1 for the
// root) and its depth in edges.
std::vector<int> binary_tree_parents(int n);
int binary_tree_depth(int n);

}  // namespace hetsim

#include "sim/collectives/collective_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "base/error.hpp"

namespace hetsim {

namespace {

int pipeline_chunks(double bytes) {
  const double wanted = std::ceil(bytes / kPipelineChunkBytes);
  return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(kMaxPipelineChunks)));
}

// Transfers of `steps` ring steps on each of `rings` rings of `ring_size` GPUs (ring_phase).
double ring_phase_transfers(double rings, double ring_size, double steps) {
  return ring_size < 2 || steps <= 0 ? 0 : rings * ring_size * steps;
}

// Appends transfers and ring phases and remembers, per GPU, its last send and last receive, so
// that the first transfer of a GPU in the next phase waits for what the GPU already had to do.
class PlanBuilder {
 public:
  explicit PlanBuilder(CollectivePlan& plan) : plan_(plan) {}

  std::uint64_t add(GpuId src, GpuId dst, double bytes, std::vector<TransferDependency> after) {
    // Stored transfers take the ids before every ring phase's (CollectivePlan).
    if (!plan_.ring_phases.empty()) throw std::logic_error("collective plan: a stored transfer after a ring phase");
    plan_.transfers.push_back(Transfer{src, dst, bytes, std::move(after)});
    const std::uint64_t id = plan_.transfers.size() - 1;
    last_send_[src] = id;
    last_recv_[dst] = id;
    return id;
  }

  // A GPU may act once its last receive has arrived and its last send has left it.
  std::vector<TransferDependency> ready(GpuId gpu) const {
    std::vector<TransferDependency> after;
    if (const auto it = last_recv_.find(gpu); it != last_recv_.end()) after.push_back({it->second, false});
    if (const auto it = last_send_.find(gpu); it != last_send_.end()) after.push_back({it->second, true});
    return after;
  }

  // `steps` ring steps of `bytes` each on every ring of `rings` (RingPhase); rings of fewer than
  // two GPUs, or no steps, move nothing.
  void ring_phase(const std::vector<std::vector<GpuId>>& rings, int steps, double bytes) {
    const std::size_t n = rings.empty() ? 0 : rings.front().size();
    if (n < 2 || steps <= 0) return;
    RingPhase phase;
    phase.first_id = plan_.transfer_count();
    phase.rings = rings;
    phase.steps = steps;
    phase.bytes = bytes;
    // What each GPU waits for before its first step, taken before this phase adds anything.
    for (const auto& ring : rings) {
      if (ring.size() != n) throw std::logic_error("collective plan: rings of one phase differ in size");
      phase.first_after.emplace_back();
      for (GpuId gpu : ring) phase.first_after.back().push_back(ready(gpu));
    }
    // Every GPU sends and receives in the last step; the last ring holding it has the final say,
    // as its transfers come last in id order.
    const auto last_step = static_cast<std::uint64_t>(steps - 1);
    for (std::size_t r = 0; r < rings.size(); ++r) {
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t id = phase.first_id + (r * static_cast<std::uint64_t>(steps) + last_step) * n + i;
        last_send_[rings[r][i]] = id;
        last_recv_[rings[r][(i + 1) % n]] = id;
      }
    }
    plan_.ring_phases.push_back(std::move(phase));
  }

  // A chain from ring[0] through the others, `bytes` cut into pipelined chunks.
  void chain_broadcast(const std::vector<GpuId>& ring, double bytes) {
    const int chunks = pipeline_chunks(bytes);
    const double chunk = bytes / chunks;
    const std::size_t hops = ring.size() - 1;
    std::vector<std::uint64_t> previous(hops, 0);  // hop j's transfer of the previous chunk
    std::vector<std::vector<TransferDependency>> first(hops);
    for (std::size_t j = 0; j < hops; ++j) first[j] = ready(ring[j]);
    for (int c = 0; c < chunks; ++c) {
      std::vector<std::uint64_t> current(hops);
      for (std::size_t j = 0; j < hops; ++j) {
        std::vector<TransferDependency> after =
            c == 0 ? first[j] : std::vector<TransferDependency>{{previous[j], true}};
        if (j > 0) after.push_back({current[j - 1], false});
        current[j] = add(ring[j], ring[j + 1], chunk, std::move(after));
      }
      previous = std::move(current);
    }
  }

  // One binary tree over `order`: chunks reduced towards the root, then broadcast back down.
  void tree_all_reduce(const std::vector<GpuId>& order, double bytes) {
    const int n = static_cast<int>(order.size());
    const std::vector<int> parent = binary_tree_parents(n);
    std::vector<std::vector<int>> children(n);
    std::vector<int> depth(n, 0);
    int root = 0;
    for (int p = 0; p < n; ++p) {
      if (parent[p] < 0) root = p;
      else children[parent[p]].push_back(p);
    }
    // Positions from the root down (breadth-first); reversed, leaves come before their parents.
    std::vector<int> top_down{root};
    for (std::size_t i = 0; i < top_down.size(); ++i)
      for (int child : children[top_down[i]]) top_down.push_back(child);
    const int chunks = pipeline_chunks(bytes);
    const double chunk = bytes / chunks;
    // The previous chunk's transfer into/out of each position (read for chunks after the first).
    std::vector<std::uint64_t> up(n, 0), down(n, 0);
    for (int c = 0; c < chunks; ++c) {
      std::vector<std::uint64_t> up_now(n, 0), down_now(n, 0);
      for (auto it = top_down.rbegin(); it != top_down.rend(); ++it) {
        const int p = *it;
        if (p == root) continue;
        // A tree is a whole collective (both trees start together), so its first chunk waits for
        // nothing but its children.
        std::vector<TransferDependency> after;
        if (c > 0) after.push_back({up[p], true});
        for (int child : children[p]) after.push_back({up_now[child], false});
        up_now[p] = add(order[p], order[parent[p]], chunk, std::move(after));
      }
      for (int p : top_down) {
        for (int child : children[p]) {
          std::vector<TransferDependency> after;
          if (p == root) {
            for (int reduced : children[root]) after.push_back({up_now[reduced], false});
          } else {
            after.push_back({down_now[p], false});
          }
          if (c > 0) after.push_back({down[child], true});
          down_now[child] = add(order[p], order[child], chunk, std::move(after));
        }
      }
      up = std::move(up_now);
      down = std::move(down_now);
    }
  }


 private:
  CollectivePlan& plan_;
  std::map<GpuId, std::uint64_t> last_send_;
  std::map<GpuId, std::uint64_t> last_recv_;
};

// Fills parent[] for positions lo..hi under `up`; returns the subtree's depth in edges (-1 when
// empty).
int tree_build(std::vector<int>& parent, int lo, int hi, int up) {
  if (lo > hi) return -1;
  const int mid = lo + (hi - lo) / 2;
  parent[mid] = up;
  return 1 + std::max(tree_build(parent, lo, mid - 1, mid), tree_build(parent, mid + 1, hi, mid));
}

}  // namespace

void check_collective(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                      const std::vector<GpuId>& gpus, double bytes) {
  if (op == CollectiveOp::kSend ? gpus.size() != 2 : gpus.size() < 2)
    throw Error(fmt::format("{} over {} GPUs: expected {}", to_string(op), gpus.size(),
                            op == CollectiveOp::kSend ? "exactly 2 (sender, receiver)" : "2 or more"));
  std::set<GpuId> seen;
  for (GpuId g : gpus) {
    (void)cluster.gpu(g);  // range check
    if (!seen.insert(g).second) throw Error(fmt::format("GPU {} appears twice in the group", g));
  }
  if (!(bytes >= 0)) throw Error(fmt::format("message size {} bytes: expected >= 0", bytes));
  if (algo == CollectiveAlgo::kTree && op != CollectiveOp::kAllReduce)
    throw Error(fmt::format("--algo tree: NCCL's trees do all-reduce only; got {}", to_string(op)));
  if (algo == CollectiveAlgo::kHierarchical && op != CollectiveOp::kAllReduce &&
      op != CollectiveOp::kReduceScatter && op != CollectiveOp::kAllGather)
    throw Error(fmt::format("--algo hierarchical: all-reduce, reduce-scatter or all-gather; got {}",
                            to_string(op)));
  if (algo == CollectiveAlgo::kHierarchical) (void)gpus_by_node(cluster, gpus);
}

std::vector<int> binary_tree_parents(int n) {
  std::vector<int> parent(static_cast<std::size_t>(std::max(n, 0)), -1);
  tree_build(parent, 0, n - 1, -1);
  return parent;
}

int binary_tree_depth(int n) {
  std::vector<int> parent(static_cast<std::size_t>(std::max(n, 0)), -1);
  return std::max(0, tree_build(parent, 0, n - 1, -1));
}

std::vector<std::vector<GpuId>> gpus_by_node(const Cluster& cluster, const std::vector<GpuId>& gpus) {
  std::vector<std::vector<GpuId>> nodes;
  std::map<int, std::size_t> index;
  for (GpuId g : gpus) {
    const auto [it, fresh] = index.emplace(cluster.gpu(g).node, nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(g);
  }
  for (const auto& node : nodes)
    if (node.size() != nodes.front().size())
      throw Error(fmt::format(
          "hierarchical collectives need the same number of the group's GPUs in every node; node "
          "\"{}\" has {}, node \"{}\" has {}",
          cluster.node_name(cluster.gpu(nodes.front().front()).node), nodes.front().size(),
          cluster.node_name(cluster.gpu(node.front()).node), node.size()));
  return nodes;
}

std::vector<std::vector<GpuId>> ring_channels(const Cluster& cluster, const std::vector<GpuId>& ring) {
  // Where each run of consecutive GPUs on one node starts, in ring order. Flags by node rather
  // than a set: the data-parallel rings of a 65,536-GPU replay made 131,072 set nodes.
  std::vector<std::size_t> run_starts;
  std::vector<char> node_seen(static_cast<std::size_t>(cluster.node_count()), 0);
  int run_node = -1;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const int node = cluster.gpu(ring[i]).node;
    if (!run_starts.empty() && node == run_node) continue;
    if (node_seen[static_cast<std::size_t>(node)]) return {ring};  // a node visited twice
    node_seen[static_cast<std::size_t>(node)] = 1;
    run_starts.push_back(i);
    run_node = node;
  }
  if (run_starts.size() < 2) return {ring};
  const std::size_t g = run_starts[1];
  if (g < 2) return {ring};
  for (std::size_t r = 0; r < run_starts.size(); ++r)  // every run g GPUs long
    if (run_starts[r] != r * g) return {ring};
  if (ring.size() != run_starts.size() * g) return {ring};
  std::vector<std::vector<GpuId>> channels(g);
  for (std::size_t c = 0; c < g; ++c) {
    channels[c].reserve(ring.size());
    for (std::size_t run = 0; run < ring.size(); run += g)
      for (std::size_t j = 0; j < g; ++j) channels[c].push_back(ring[run + (c + j) % g]);
  }
  return channels;
}

std::uint64_t RingPhase::transfer_count() const {
  const std::uint64_t n = rings.empty() ? 0 : rings.front().size();
  return rings.size() * n * static_cast<std::uint64_t>(std::max(steps, 0));
}

std::uint64_t CollectivePlan::transfer_count() const {
  std::uint64_t count = transfers.size();
  for (const RingPhase& phase : ring_phases) count += phase.transfer_count();
  return count;
}

double planned_transfer_count(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                              const std::vector<GpuId>& gpus, double bytes) {
  const double n = static_cast<double>(gpus.size());
  if (algo == CollectiveAlgo::kTree) return 2 * pipeline_chunks(bytes / 2) * 2 * (n - 1);
  if (algo == CollectiveAlgo::kHierarchical) {
    const auto nodes = gpus_by_node(cluster, gpus);
    const double g = static_cast<double>(nodes.front().size());
    const double m = static_cast<double>(nodes.size());
    const double intra_phases = op == CollectiveOp::kAllReduce ? 2 : 1;
    const double inter_steps = op == CollectiveOp::kAllReduce ? 2 * (m - 1) : m - 1;
    return intra_phases * ring_phase_transfers(m, g, g - 1) + ring_phase_transfers(g, m, inter_steps);
  }
  const double channels = static_cast<double>(ring_channels(cluster, gpus).size());
  switch (op) {
    case CollectiveOp::kAllReduce: return ring_phase_transfers(channels, n, 2 * (n - 1));
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: return ring_phase_transfers(channels, n, n - 1);
    case CollectiveOp::kBroadcast: return pipeline_chunks(bytes) * (n - 1);
    case CollectiveOp::kSend: return 1;
    case CollectiveOp::kAllToAll: return n * (n - 1);
  }
  return 0;
}

CollectivePlan plan_collective(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                               const std::vector<GpuId>& gpus, double bytes) {
  check_collective(cluster, op, algo, gpus, bytes);
  const double transfers = planned_transfer_count(cluster, op, algo, gpus, bytes);
  // Ring reduce-scatter, all-gather and all-reduce, flat or hierarchical, are ring phases.
  const bool ring_phases = algo == CollectiveAlgo::kHierarchical ||
                           (algo == CollectiveAlgo::kRing &&
                            (op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
                             op == CollectiveOp::kAllGather));
  if (ring_phases && transfers > kMaxRingTransfers)
    throw Error(fmt::format(
        "{} {} over {} GPUs is {:.0f} point-to-point transfers; the flow simulation takes at most "
        "{:.0f} ring transfers (several minutes); give fewer GPUs, --algo hierarchical, or --alpha-beta "
        "for the closed form",
        to_string(op), to_string(algo), gpus.size(), transfers, kMaxRingTransfers));
  if (!ring_phases && transfers > kMaxFlowTransfers)
    throw Error(fmt::format(
        "{} {} over {} GPUs is {:.0f} point-to-point transfers; the flow simulation takes at most "
        "{:.0f} (about 1 GiB of memory); give fewer GPUs, --algo hierarchical, or --alpha-beta for "
        "the closed form",
        to_string(op), to_string(algo), gpus.size(), transfers, kMaxFlowTransfers));
  CollectivePlan plan;
  PlanBuilder build(plan);
  const int n = static_cast<int>(gpus.size());

  if (algo == CollectiveAlgo::kTree) {
    std::vector<GpuId> shifted(gpus.begin() + 1, gpus.end());
    shifted.push_back(gpus.front());
    build.tree_all_reduce(gpus, bytes / 2);
    build.tree_all_reduce(shifted, bytes / 2);
    return plan;
  }
  if (algo == CollectiveAlgo::kHierarchical) {
    const auto nodes = gpus_by_node(cluster, gpus);
    const int g = static_cast<int>(nodes.front().size());
    const int m = static_cast<int>(nodes.size());
    std::vector<std::vector<GpuId>> across(static_cast<std::size_t>(g));
    for (const auto& node : nodes)
      for (int j = 0; j < g; ++j) across[j].push_back(node[j]);
    const double shard = bytes / g;
    if (op != CollectiveOp::kAllGather) build.ring_phase(nodes, g - 1, shard);
    const int inter_steps = op == CollectiveOp::kAllReduce ? 2 * (m - 1) : m - 1;
    build.ring_phase(across, inter_steps, shard / m);
    if (op != CollectiveOp::kReduceScatter) build.ring_phase(nodes, g - 1, shard);
    return plan;
  }
  const auto channels = ring_channels(cluster, gpus);
  const double per_channel = bytes / static_cast<double>(channels.size());
  switch (op) {
    case CollectiveOp::kAllReduce: build.ring_phase(channels, 2 * (n - 1), per_channel / n); break;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: build.ring_phase(channels, n - 1, per_channel / n); break;
    case CollectiveOp::kBroadcast: build.chain_broadcast(gpus, bytes); break;
    case CollectiveOp::kSend: build.add(gpus[0], gpus[1], bytes, {}); break;
    case CollectiveOp::kAllToAll:
      // Every pair at once, as NCCL's grouped send/recv does.
      for (GpuId from : gpus)
        for (GpuId to : gpus)
          if (from != to) build.add(from, to, bytes / n, {});
      break;
  }
  return plan;
}

}  // namespace hetsim

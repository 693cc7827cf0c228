#include "sim/collectives/alpha_beta.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/error.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/ring_collective.hpp"

namespace hetsim {

namespace {

// (n-1)/n * S/B + (n-1) L per pass over the ring; all-reduce makes two passes.
double ring_passes_s(const RingBottleneck& ring, double bytes, int passes) {
  if (ring.ranks < 2) return 0;
  const double n = ring.ranks;
  return passes * ((n - 1) / n * bytes / ring.bandwidth_bytes_per_s + (n - 1) * ring.latency_s);
}

double all_to_all_s(const Cluster& cluster, const std::vector<GpuId>& gpus, double bytes) {
  std::map<LinkId, double> load;
  double latency = 0;
  const double each = bytes / static_cast<double>(gpus.size());
  for (GpuId from : gpus)
    for (GpuId to : gpus) {
      if (from == to) continue;
      for (LinkId link : cluster.route(from, to)) load[link] += each;
      latency = std::max(latency, cluster.route_latency_s(from, to));
    }
  double drain = 0;
  for (const auto& [link, on_link] : load)
    drain = std::max(drain, on_link / cluster.links()[link].bandwidth_bytes_per_s);
  return drain + latency;
}

double chain_broadcast_s(const Cluster& cluster, const std::vector<GpuId>& gpus, double bytes) {
  double bandwidth = INFINITY;
  double latency = 0;
  for (std::size_t j = 0; j + 1 < gpus.size(); ++j) {
    bandwidth = std::min(bandwidth, cluster.route_bottleneck_bandwidth_bytes_per_s(gpus[j], gpus[j + 1]));
    latency = std::max(latency, cluster.route_latency_s(gpus[j], gpus[j + 1]));
  }
  const double chunks = std::clamp(std::ceil(bytes / kPipelineChunkBytes), 1.0,
                                   static_cast<double>(kMaxPipelineChunks));
  const double chunk = bytes / chunks;
  const double hops = static_cast<double>(gpus.size() - 1);
  return hops * (latency + chunk / bandwidth) + (chunks - 1) * chunk / bandwidth;
}

double tree_all_reduce_s(const Cluster& cluster, const std::vector<GpuId>& gpus, double bytes) {
  const int n = static_cast<int>(gpus.size());
  const std::vector<int> parent = binary_tree_parents(n);
  double bandwidth = INFINITY;
  double latency = 0;
  for (int shift = 0; shift < 2; ++shift)
    for (int p = 0; p < n; ++p) {
      if (parent[p] < 0) continue;
      const GpuId a = gpus[(p + shift) % n];
      const GpuId b = gpus[(parent[p] + shift) % n];
      bandwidth = std::min(bandwidth, cluster.route_bottleneck_bandwidth_bytes_per_s(a, b));
      latency = std::max(latency, cluster.route_latency_s(a, b));
    }
  const double half = bytes / 2;
  const double chunks = std::clamp(std::ceil(half / kPipelineChunkBytes), 1.0,
                                   static_cast<double>(kMaxPipelineChunks));
  const double depth = binary_tree_depth(n);
  return 2 * bytes / bandwidth + 2 * depth * (latency + half / chunks / bandwidth);
}

double hierarchical_s(const Cluster& cluster, CollectiveOp op, const std::vector<GpuId>& gpus,
                      double bytes) {
  const auto nodes = gpus_by_node(cluster, gpus);
  const std::size_t g = nodes.front().size();
  std::vector<std::vector<GpuId>> across(g);
  for (const auto& node : nodes)
    for (std::size_t j = 0; j < g; ++j) across[j].push_back(node[j]);
  const RingBottleneck intra = ring_bottleneck(cluster, nodes);
  const RingBottleneck inter = ring_bottleneck(cluster, across);
  const double shard = bytes / static_cast<double>(g);
  const int passes = op == CollectiveOp::kAllReduce ? 2 : 1;
  return ring_passes_s(intra, bytes, passes) + ring_passes_s(inter, shard, passes);
}

}  // namespace

double alpha_beta_collective_s(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                               const std::vector<GpuId>& gpus, double bytes) {
  check_collective(cluster, op, algo, gpus, bytes);
  if (algo == CollectiveAlgo::kTree) return tree_all_reduce_s(cluster, gpus, bytes);
  if (algo == CollectiveAlgo::kHierarchical) return hierarchical_s(cluster, op, gpus, bytes);
  switch (op) {
    case CollectiveOp::kAllReduce: return ring_passes_s(ring_bottleneck(cluster, {gpus}), bytes, 2);
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: return ring_passes_s(ring_bottleneck(cluster, {gpus}), bytes, 1);
    case CollectiveOp::kBroadcast: return chain_broadcast_s(cluster, gpus, bytes);
    case CollectiveOp::kSend:
      return cluster.route_latency_s(gpus[0], gpus[1]) +
             bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(gpus[0], gpus[1]);
    case CollectiveOp::kAllToAll: return all_to_all_s(cluster, gpus, bytes);
  }
  throw Error("alpha-beta: unknown collective");
}

}  // namespace hetsim

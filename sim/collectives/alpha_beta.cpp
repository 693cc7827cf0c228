#include "sim/collectives/alpha_beta.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/error.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/ring_collective.hpp"

namespace hetsim {

namespace {

// A ring over `gpus` (a lap back to the first): the smallest bandwidth share of any hop and the
// mean hop latency. Steps are not barriers: a chunk moves on as soon as it arrives, so over
// n-1 steps it crosses n-1 hops of the ring and meets their latencies, not n-1 times the largest.
RingBottleneck ring_with_mean_latency(const Cluster& cluster, const std::vector<std::vector<GpuId>>& rings) {
  RingBottleneck ring = ring_bottleneck(cluster, rings);
  double sum = 0;
  double hops = 0;
  for (const auto& r : rings)
    for (std::size_t i = 0; i < r.size(); ++i, ++hops) sum += cluster.route_latency_s(r[i], r[(i + 1) % r.size()]);
  if (hops > 0) ring.latency_s = sum / hops;
  return ring;
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

// A pipeline of hops: the first chunk crosses every hop (its drain and latency), the other k-1
// follow at the pace of the slowest hop.
double chain_broadcast_s(const Cluster& cluster, const std::vector<GpuId>& gpus, double bytes) {
  const double chunks = std::clamp(std::ceil(bytes / kPipelineChunkBytes), 1.0,
                                   static_cast<double>(kMaxPipelineChunks));
  const double chunk = bytes / chunks;
  double slowest = 0;
  double first_chunk = 0;
  for (std::size_t j = 0; j + 1 < gpus.size(); ++j) {
    const double drain = chunk / cluster.route_bottleneck_bandwidth_bytes_per_s(gpus[j], gpus[j + 1]);
    first_chunk += drain + cluster.route_latency_s(gpus[j], gpus[j + 1]);
    slowest = std::max(slowest, drain);
  }
  return first_chunk + (chunks - 1) * slowest;
}

// Each tree edge carries S/2 up (child to parent) and S/2 down; the busiest link drains its load
// while the first chunk's trip to the root and back (the deepest path, both ways) fills and
// empties the pipeline.
double tree_all_reduce_s(const Cluster& cluster, const std::vector<GpuId>& gpus, double bytes) {
  const int n = static_cast<int>(gpus.size());
  const std::vector<int> parent = binary_tree_parents(n);
  const double half = bytes / 2;
  const double chunk = half / std::clamp(std::ceil(half / kPipelineChunkBytes), 1.0,
                                         static_cast<double>(kMaxPipelineChunks));
  std::map<LinkId, double> load;
  double round_trip = 0;
  for (int shift = 0; shift < 2; ++shift) {
    const auto gpu = [&](int p) { return gpus[(p + shift) % n]; };
    for (int p = 0; p < n; ++p) {
      if (parent[p] < 0) continue;
      for (LinkId link : cluster.route(gpu(p), gpu(parent[p]))) load[link] += half;
      for (LinkId link : cluster.route(gpu(parent[p]), gpu(p))) load[link] += half;
      // The path from p to the root, one chunk's drain and latency per edge, up and back down.
      double path = 0;
      for (int q = p; parent[q] >= 0; q = parent[q])
        path += chunk / cluster.route_bottleneck_bandwidth_bytes_per_s(gpu(q), gpu(parent[q])) +
                cluster.route_latency_s(gpu(q), gpu(parent[q]));
      round_trip = std::max(round_trip, 2 * path);
    }
  }
  double drain = 0;
  for (const auto& [link, on_link] : load)
    drain = std::max(drain, on_link / cluster.links()[link].bandwidth_bytes_per_s);
  return drain + round_trip;
}

double hierarchical_s(const Cluster& cluster, CollectiveOp op, const std::vector<GpuId>& gpus,
                      double bytes) {
  const auto nodes = gpus_by_node(cluster, gpus);
  const std::size_t g = nodes.front().size();
  std::vector<std::vector<GpuId>> across(g);
  for (const auto& node : nodes)
    for (std::size_t j = 0; j < g; ++j) across[j].push_back(node[j]);
  const RingBottleneck intra = ring_with_mean_latency(cluster, nodes);
  const RingBottleneck inter = ring_with_mean_latency(cluster, across);
  const double shard = bytes / static_cast<double>(g);
  if (op == CollectiveOp::kAllReduce)
    return ring_all_reduce_s(intra, bytes) + ring_all_reduce_s(inter, shard);
  return ring_reduce_scatter_s(intra, bytes) + ring_reduce_scatter_s(inter, shard);
}

}  // namespace

double alpha_beta_collective_s(const Cluster& cluster, CollectiveOp op, CollectiveAlgo algo,
                               const std::vector<GpuId>& gpus, double bytes) {
  check_collective(cluster, op, algo, gpus, bytes);
  if (algo == CollectiveAlgo::kTree) return tree_all_reduce_s(cluster, gpus, bytes);
  if (algo == CollectiveAlgo::kHierarchical) return hierarchical_s(cluster, op, gpus, bytes);
  // A ring collective runs on its channels at once, each with an equal share of the bytes.
  const auto channels = ring_channels(cluster, gpus);
  const double per_channel = bytes / static_cast<double>(channels.size());
  switch (op) {
    case CollectiveOp::kAllReduce: return ring_all_reduce_s(ring_with_mean_latency(cluster, channels), per_channel);
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather: return ring_reduce_scatter_s(ring_with_mean_latency(cluster, channels), per_channel);
    case CollectiveOp::kBroadcast: return chain_broadcast_s(cluster, gpus, bytes);
    case CollectiveOp::kSend:
      return cluster.route_latency_s(gpus[0], gpus[1]) +
             bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(gpus[0], gpus[1]);
    case CollectiveOp::kAllToAll: return all_to_all_s(cluster, gpus, bytes);
  }
  throw Error("alpha-beta: unknown collective");
}

}  // namespace hetsim

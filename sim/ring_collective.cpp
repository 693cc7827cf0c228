#include "sim/ring_collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "base/error.hpp"
#include "models/tp_collectives.hpp"

namespace hetsim {

namespace {

// The bottleneck of concurrent routes: `for_each_pair(visit)` calls visit(from, to) once per
// route. The slowest route's latency, and every link the routes cross, sorted: a link's crossing
// count is then the length of its run (a ring of 16,384 GPUs crosses tens of thousands of links:
// no tree of counters), and the bottleneck is the smallest share of any run's link.
template <class ForEachPair>
RingBottleneck routes_bottleneck(const Cluster& cluster, ForEachPair for_each_pair,
                                 double wan_compression) {
  RingBottleneck result;
  const auto& links = cluster.links();
  std::vector<LinkId> crossings;
  for_each_pair([&](GpuId from, GpuId to) {
    const std::span<const LinkId> route = cluster.route(from, to);
    double latency = 0;
    for (LinkId link : route) latency += links[link].latency_s;
    result.latency_s = std::max(result.latency_s, latency);
    crossings.insert(crossings.end(), route.begin(), route.end());
  });
  std::sort(crossings.begin(), crossings.end());
  result.bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
  for (auto run = crossings.begin(); run != crossings.end();) {
    const LinkId link = *run;
    const auto run_end = std::upper_bound(run, crossings.end(), link);
    const double uses = static_cast<double>(run_end - run);
    const double speedup = links[link].link_class == LinkClass::kWan ? wan_compression : 1.0;
    result.bandwidth_bytes_per_s =
        std::min(result.bandwidth_bytes_per_s, links[link].bandwidth_bytes_per_s * speedup / uses);
    run = run_end;
  }
  return result;
}

}  // namespace

RingBottleneck ring_bottleneck(const Cluster& cluster, const std::vector<std::vector<GpuId>>& rings,
                               double wan_compression) {
  if (rings.empty() || rings.front().size() < 2) return {};
  RingBottleneck result = routes_bottleneck(
      cluster,
      [&](const auto& visit) {
        for (const auto& ring : rings)
          for (std::size_t i = 0; i < ring.size(); ++i) visit(ring[i], ring[(i + 1) % ring.size()]);
      },
      wan_compression);
  result.ranks = static_cast<int>(rings.front().size());
  return result;
}

RingBottleneck pairs_bottleneck(const Cluster& cluster,
                                const std::vector<std::pair<GpuId, GpuId>>& pairs) {
  RingBottleneck result = routes_bottleneck(
      cluster,
      [&](const auto& visit) {
        for (const auto& [from, to] : pairs) visit(from, to);
      },
      1.0);
  result.ranks = static_cast<int>(pairs.size());
  return result;
}

TensorParallelLinks tensor_parallel_links(const Cluster& cluster, const std::vector<GpuId>& gpus) {
  if (gpus.size() < 2) {
    return {cluster.intra_node_bandwidth_bytes_per_s(gpus.front()),
            cluster.intra_node_latency_s(gpus.front())};
  }
  const RingBottleneck ring = ring_bottleneck(cluster, {gpus});
  return {ring.bandwidth_bytes_per_s, ring.latency_s};
}

// The closed forms live with the tensor-parallel costs (models/tp_collectives.hpp); here they are
// applied to a ring's bottleneck.
double ring_all_reduce_s(const RingBottleneck& ring, double bytes) {
  if (ring.ranks < 2) return 0;
  return ring_all_reduce_s(bytes, ring.ranks, {ring.bandwidth_bytes_per_s, ring.latency_s});
}

double ring_reduce_scatter_s(const RingBottleneck& ring, double bytes) {
  if (ring.ranks < 2) return 0;
  return ring_reduce_scatter_s(bytes, ring.ranks, {ring.bandwidth_bytes_per_s, ring.latency_s});
}

RingLoad ring_load(CollectiveOp op, int ranks, double bytes) {
  if (ranks < 2) return {};
  // A ring hop carries nccl-tests' bus bandwidth share of the message.
  const double hop_bytes = bus_bandwidth_factor(op, ranks) * bytes;
  if (op == CollectiveOp::kAllReduce) return {hop_bytes, 2 * (ranks - 1)};
  if (op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather) return {hop_bytes, ranks - 1};
  throw SimulationError(fmt::format("a ring runs all-reduce, reduce-scatter or all-gather, not {}", to_string(op)));
}

}  // namespace hetsim

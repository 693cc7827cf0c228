#include "sim/data_parallel_sync.hpp"

#include <algorithm>
#include <cmath>

#include "sim/collectives/collective_plan.hpp"
#include "sim/ring_collective.hpp"

namespace hetsim {

namespace {

// The hops of one channel of a ring that carries `share` of the collective's bytes.
RingHops ring_hops(const Cluster& cluster, const std::vector<GpuId>& ring, double share, double wan_compression) {
  RingHops hops;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const GpuId from = ring[i];
    const GpuId to = ring[(i + 1) % ring.size()];
    // One look-up of the route for its latency (Cluster::route_latency_s's sum) and its WAN links.
    RingHop hop{cluster.route(from, to), share, 0};
    for (LinkId link : hop.route) {
      hop.latency_s += cluster.links()[link].latency_s;
      if (cluster.links()[link].link_class == LinkClass::kWan) hop.wire_share = share / wan_compression;
    }
    hops.push_back(hop);
  }
  return hops;
}

}  // namespace

RingGroup ring_group(const Cluster& cluster, const std::vector<std::vector<GpuId>>& rings, double wan_compression) {
  RingGroup group;
  std::vector<std::vector<GpuId>> channel_rings;
  for (const auto& ring : rings) {
    const auto channels = ring_channels(cluster, ring);
    for (const auto& channel : channels) {
      group.hops.push_back(ring_hops(cluster, channel, 1.0 / static_cast<double>(channels.size()), wan_compression));
      channel_rings.push_back(channel);
    }
  }
  group.channels_per_ring = rings.empty() ? 1.0 : static_cast<double>(channel_rings.size() / rings.size());
  if (!channel_rings.empty()) group.bottleneck = ring_bottleneck(cluster, channel_rings, wan_compression);
  return group;
}

BucketCollective group_collective(const RingGroup& group, int group_index, CollectiveOp op, double bytes, int chunk,
                                  double ready_fraction) {
  // A ring all-gather takes as long as a reduce-scatter of the same size.
  const double per_channel = bytes / group.channels_per_ring;
  const double seconds = op == CollectiveOp::kAllReduce ? ring_all_reduce_s(group.bottleneck, per_channel)
                                                        : ring_reduce_scatter_s(group.bottleneck, per_channel);
  return BucketCollective{op, bytes, chunk, ready_fraction, group_index, seconds};
}

double default_bucket_params(int dp) { return std::max(40e6, 1e6 * dp); }

double gathered_weight_bytes(const RankSync& sync) {
  if (!sync.gather_before_every_op) return 0;
  double largest = 0;
  for (const auto& units : sync.chunk_gathers)
    for (const GatherUnit& unit : units) {
      double bytes = 0;
      for (const BucketCollective& c : unit.collectives) bytes += c.bytes;
      largest = std::max(largest, bytes);
    }
  return 2 * largest;
}

std::vector<RankSync> data_parallel_sync(const Cluster& cluster, const ParallelPlan& plan,
                                         const Placement& placement,
                                         const std::vector<std::vector<ChunkCost>>& costs,
                                         const DataParallelOptions& options) {
  std::vector<RankSync> sync(static_cast<std::size_t>(plan.pp));
  // Context-parallel ranks hold the same weights: Megatron reduces over dp x cp GPUs.
  const int replicas = plan.data_parallel_with_context();
  if (replicas < 2) return sync;
  const double bucket_params =
      options.bucket_params > 0 ? options.bucket_params : default_bucket_params(replicas);
  const int zero_stage = plan.effective_zero_stage();
  const bool sharded = zero_stage >= 1;
  const int expert_replicas = plan.expert_data_parallel();
  // Megatron's mixed-precision layout for the plan: gradients reduced from the main-grad buffer
  // (fp32, or fp16 for fp16 runs without --accumulate-allreduce-grads-in-fp32), weights gathered
  // in their 2-byte training dtype.
  const BytesPerParam layout = bytes_per_param(plan);
  for (int rank = 0; rank < plan.pp; ++rank) {
    RankSync& rank_sync = sync[rank];
    rank_sync.chunk_gathers.resize(costs[rank].size());  // filled for ZeRO-3 / --overlap-param-gather
    rank_sync.overlap = options.overlap_grad_reduce;
    rank_sync.every_microbatch = zero_stage >= 2;
    // Group 0: dense weights, one ring per tensor-parallel index over all replicas (dp x cp GPUs
    // with context parallelism). Group 1: routed-expert weights, one ring per (tensor-parallel
    // index, expert-parallel index) over the replicas holding the same experts (every ep-th).
    std::vector<std::vector<std::vector<GpuId>>> groups(2);
    for (int t = 0; t < plan.tp; ++t) {
      const std::vector<GpuId> ring = placement.data_parallel_gpus(rank, t);
      groups[0].push_back(ring);
      for (int e = 0; e < plan.ep && expert_replicas > 1; ++e) {
        std::vector<GpuId> experts;
        for (std::size_t d = e; d < ring.size(); d += plan.ep) experts.push_back(ring[d]);
        groups[1].push_back(std::move(experts));
      }
    }
    // Each ring runs on its channels (one per NIC its nodes use, ring_channels), each with an
    // equal share of the bytes; every ring of a group has as many.
    std::vector<RingGroup> ring_groups;
    for (const auto& rings : groups) {
      ring_groups.push_back(ring_group(cluster, rings, options.wan_compression));
      rank_sync.groups.push_back(ring_groups.back().hops);
    }
    const auto collective = [&](CollectiveOp op, double bytes, int chunk, double ready_fraction, int group) {
      return group_collective(ring_groups[group], group, op, bytes, chunk, ready_fraction);
    };
    const bool gather_before_forward = sharded && zero_stage < 3 && options.overlap_param_gather;
    rank_sync.gather_before_every_op = zero_stage == 3;
    // Every replica of a rank holds the same layers: replica 0's (worker `rank`) stand for all.
    const auto& chunks = costs[rank];
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const int chunk = static_cast<int>(c);
      const double dense = chunks[c].params - chunks[c].expert_params;
      const double experts = expert_replicas > 1 ? chunks[c].expert_params : 0;
      auto& units = rank_sync.chunk_gathers[c];
      for (const auto& [params, group] : {std::pair{dense, 0}, std::pair{experts, 1}}) {
        if (params <= 0) continue;
        const bool bucketed = options.overlap_grad_reduce && c == 0;
        const int buckets = bucketed ? static_cast<int>(std::ceil(params / bucket_params)) : 1;
        for (int b = 0; b < buckets; ++b) {
          const double in_bucket = bucketed ? std::min(bucket_params, params - b * bucket_params) : params;
          const double ready = bucketed ? std::min(1.0, (b + 1) * bucket_params / params) : 1.0;
          rank_sync.gradients.push_back(collective(sharded ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
                                                   in_bucket * layout.gradients, chunk, ready, group));
          if (!sharded || zero_stage == 3) continue;
          const BucketCollective gather = collective(CollectiveOp::kAllGather, in_bucket * layout.weights, chunk, 1, group);
          if (gather_before_forward) {
            units.push_back(GatherUnit{{gather}, in_bucket / (dense + experts)});
          } else {
            rank_sync.parameters.push_back(gather);
          }
        }
      }
      // Buckets fill in backward order; the forward needs them the other way round.
      if (gather_before_forward) std::reverse(units.begin(), units.end());
      // ZeRO-3: one unit per layer (FSDP wraps each transformer block), its dense weights and,
      // for MoE, its routed experts; the embedding and LM head are spread over the chunk's layers.
      const int layers = std::max(1, chunks[c].layers);
      for (int l = 0; l < layers && zero_stage == 3; ++l) {
        GatherUnit unit{{}, 1.0 / layers};
        if (dense > 0)
          unit.collectives.push_back(collective(CollectiveOp::kAllGather, dense / layers * layout.weights, chunk, 1, 0));
        if (experts > 0)
          unit.collectives.push_back(collective(CollectiveOp::kAllGather, experts / layers * layout.weights, chunk, 1, 1));
        if (!unit.collectives.empty()) units.push_back(std::move(unit));
      }
    }
  }
  return sync;
}

}  // namespace hetsim

#include "sim/training_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <set>
#include <tuple>

#include "base/error.hpp"
#include "base/units.hpp"
#include "models/chunk_cost.hpp"
#include "models/context_parallel.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/partitioner.hpp"
#include "schedules/validator.hpp"
#include "schedules/zb_auto.hpp"
#include "sim/cluster_links.hpp"
#include "sim/collectives/alpha_beta.hpp"
#include "sim/data_parallel_sync.hpp"
#include "sim/gpu_profiles.hpp"
#include "sim/optimizer_sync.hpp"
#include "sim/pipeline_replay.hpp"
#include "sim/rank_pair_syncs.hpp"
#include "sim/replay_size.hpp"
#include "sim/site_placement.hpp"
#include "sim/ring_collective.hpp"
#include "sim/transport_window.hpp"

namespace hetsim {

namespace {

// Gradient buckets per model: each is a collective with its own events; Megatron's default
// bucket (40M parameters) gives about 10,000 for a 405B model.
constexpr double kMaxBuckets = 1e5;

// Layers of each model slice. A slice is a position along a microbatch's path: pp * vpp of them
// for looped and V-shaped placements, pp for DualPipe, whose ranks hold two mirrored slices.
std::vector<int> partition_layers(const TransformerConfig& model, int slices,
                                  const std::string& slices_detail, const RunOptions& options) {
  const int layers = model.num_layers;
  const int first = options.first_stage_layers;
  const int last = options.last_stage_layers;
  if (first == 0 && last == 0) {
    if (layers % slices != 0)
      throw PlanError(fmt::format(
          "{} layers are not divisible by {} virtual pipeline stages ({}); choose pp*vpp "
          "dividing {} or set --decoder-first-pipeline-num-layers/--decoder-last-pipeline-num-layers",
          layers, slices, slices_detail, layers));
    return std::vector<int>(static_cast<std::size_t>(slices), layers / slices);
  }
  if (slices < 2) throw PlanError("uneven first/last stage layers need pp >= 2");
  const int middle_stages = slices - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int middle_layers = layers - first - last;
  if (middle_layers < 0 || (middle_stages > 0 && middle_layers % middle_stages != 0) ||
      (middle_stages == 0 && middle_layers != 0))
    throw PlanError(fmt::format(
        "{} layers minus first-stage {} and last-stage {} leave {} layers, not divisible by the "
        "{} other stages",
        layers, first, last, middle_layers, middle_stages));
  const int per_middle = middle_stages > 0 ? middle_layers / middle_stages : 0;
  std::vector<int> result(static_cast<std::size_t>(slices), per_middle);
  if (first > 0) result.front() = first;
  if (last > 0) result.back() = last;
  return result;
}

// --layers-per-stage as given: one entry >= 1 per slice, adding up to the model's layers.
std::vector<int> checked_layers_per_stage(const TransformerConfig& model, int slices,
                                          const std::string& slices_detail,
                                          const std::vector<int>& given) {
  if (static_cast<int>(given.size()) != slices)
    throw PlanError(fmt::format(
        "--layers-per-stage has {} entries ({}); expected one per model slice: {} ({})",
        given.size(), fmt::join(given, ","), slices, slices_detail));
  int sum = 0;
  for (std::size_t s = 0; s < given.size(); ++s) {
    if (given[s] < 1)
      throw PlanError(fmt::format("--layers-per-stage entry {} (stage {}) is {}; expected at least 1 layer",
                                  s + 1, s, given[s]));
    sum += given[s];
  }
  if (sum != model.num_layers)
    throw PlanError(fmt::format("--layers-per-stage {} adds up to {} layers; the model has {}",
                                fmt::join(given, ","), sum, model.num_layers));
  return given;
}

// The partitioner's view of each pipeline rank (see RunOptions::balance_layers).
std::vector<PartitionStage> partition_stages(const Cluster& cluster, const GpuCatalog& catalog,
                                             const TransformerConfig& model, const ParallelPlan& plan,
                                             const Placement& placement, const Timetable& timetable,
                                             GpuProfiles& profiles);

std::vector<int> balanced_layers(const Cluster& cluster, const GpuCatalog& catalog,
                                 const TransformerConfig& model, const ParallelPlan& plan,
                                 const Placement& placement, const Timetable& timetable,
                                 GpuProfiles& profiles) {
  if (!timetable.paths.empty())
    throw PlanError(fmt::format(
        "--balance-layers is not supported for the {} timetable: its microbatches follow {} paths "
        "(mirrored halves of the model on each rank) and the partitioner balances one chain of "
        "stages; give the split with --layers-per-stage",
        timetable.kind, timetable.paths.size()));
  if (timetable.chunks_per_rank > 1)
    throw PlanError(fmt::format(
        "--balance-layers is not supported for the {} timetable with {} chunks per rank: the "
        "partitioner balances one model chunk per rank; give the {} slices with --layers-per-stage",
        timetable.kind, timetable.chunks_per_rank, timetable.stages()));
  return partition_layers_balanced(
             model.num_layers,
             partition_stages(cluster, catalog, model, plan, placement, timetable, profiles))
      .layers_per_stage;
}

ExpertParallelLinks expert_parallel_links(const Cluster& cluster, const ParallelPlan& plan,
                                          const Placement& placement, int worker);
ContextParallelLinks context_parallel_links(const Cluster& cluster, const Placement& placement,
                                            int worker);

// The links a worker's chunk costs are computed on: those of its tensor-, expert- and
// context-parallel groups.
struct WorkerLinks {
  TensorParallelLinks tp;
  ExpertParallelLinks ep;
  ContextParallelLinks cp;
  // For the caches of chunk costs: two workers of one GPU type share a cost only when these
  // are equal too. Node groups of one GPU type may differ in NVLink, and a tensor-parallel
  // group may span nodes in one node group and not in another.
  std::array<double, 6> figures() const {
    return {tp.bandwidth_bytes_per_s, tp.latency_s, ep.bandwidth_bytes_per_s, ep.latency_s,
            cp.bandwidth_bytes_per_s, cp.latency_s};
  }
};

WorkerLinks worker_links(const Cluster& cluster, const ParallelPlan& plan, const Placement& placement,
                         int worker) {
  return {tensor_parallel_links(cluster, placement.tensor_parallel_gpus(worker)),
          expert_parallel_links(cluster, plan, placement, worker),
          context_parallel_links(cluster, placement, worker)};
}

// zb-auto searches with op-time estimates: the F, B and W of a middle stage (layers / pp layers, no
// embedding or head) on the GPUs of pipeline rank 0, the time its activation takes from rank 0
// to rank 1 (route latency + bytes over the route's bottleneck), and the share of its activation
// bytes that W keeps.
ZbAutoOptions zb_auto_estimates(const Cluster& cluster, const GpuCatalog& catalog,
                                const TransformerConfig& model, const ParallelPlan& plan,
                                const Placement& placement, int memory_limit) {
  const auto gpus = placement.tensor_parallel_gpus(0);
  // A middle stage starts past DeepSeek's dense first layers (0 for other models).
  const int layers = std::max(1, model.num_layers / plan.pp);
  const ChunkSpan span{model.first_layer_past_dense(layers), layers, false, false};
  const WorkerLinks links = worker_links(cluster, plan, placement, 0);
  const ChunkCost cost = cost_chunk(model, plan, catalog.at(cluster.gpu(gpus.front()).gpu_type), span,
                                    links.tp, links.ep, links.cp);
  ZbAutoOptions options;
  options.forward_s = cost.forward_s;
  options.backward_s = cost.backward_input_s + cost.recompute_s;
  options.weight_s = cost.backward_weight_s;
  options.memory_limit = memory_limit;
  // M_W / M_B: the GEMM inputs W still reads against all a forward keeps (models/README.md).
  if (cost.activation_bytes > 0)
    options.weight_memory_share = std::min(1.0, cost.weight_grad_bytes / cost.activation_bytes);
  if (plan.pp > 1) {
    const GpuId from = gpus.front();
    const GpuId to = placement.worker_gpus(1).front();
    const double bytes = cost.output_bytes / plan.pipeline_send_shards();
    options.transfer_s = cluster.route_latency_s(from, to) +
                         bytes / cluster.route_bottleneck_bandwidth_bytes_per_s(from, to);
  }
  return options;
}

// zb-auto's default activation limit (no --memory-limit): as many microbatches of one stage as
// every pipeline rank's GPUs hold beside their static memory (weights, gradients, optimizer
// state) and one backward's transient bytes, capped at 2p - 1 (ZB-H2's memory, which the
// heuristic rarely needs more than) and at least 1. Each rank is costed with its own layers (the
// even split, or the one the options give; --balance-layers chooses its split after the
// timetable, so the even split stands in) on each of its replicas' GPU types. The zero-bubble
// paper sets its limit from the device memory the same way (Qi et al., ICLR 2024, Sec. 3.1:
// M_limit, the memory available for activations).
int zb_auto_memory_fit(const Cluster& cluster, const GpuCatalog& catalog, const TransformerConfig& model,
                       const ParallelPlan& plan, const Placement& placement, const RunOptions& options) {
  const std::string detail = fmt::format("pp {} x vpp 1", plan.pp);
  const std::vector<int> layers =
      options.layers_per_stage.empty()
          ? partition_layers(model, plan.pp, detail, options)
          : checked_layers_per_stage(model, plan.pp, detail, options.layers_per_stage);
  int fit = 2 * plan.pp - 1;
  int first_layer = 0;
  for (int rank = 0; rank < plan.pp; ++rank) {
    const ChunkSpan span{first_layer, layers[rank], rank == 0, rank + 1 == plan.pp};
    first_layer += layers[rank];
    std::set<std::string> types_seen;
    for (int replica = 0; replica < plan.dp; ++replica) {
      const int worker = replica * plan.pp + rank;
      const auto gpus = placement.tensor_parallel_gpus(worker);
      const std::string& type = cluster.gpu(gpus.front()).gpu_type;
      if (!types_seen.insert(type).second) continue;
      const GpuSpec& spec = catalog.at(type);
      const WorkerLinks links = worker_links(cluster, plan, placement, worker);
      const ChunkCost cost = cost_chunk(model, plan, spec, span, links.tp, links.ep, links.cp);
      if (!(cost.activation_bytes > 0)) continue;
      const double static_bytes =
          static_memory(cost.params - cost.expert_params, cost.expert_params, plan).total();
      const double free_bytes = spec.hbm_bytes - static_bytes - cost.backward_transient_bytes;
      fit = std::min(fit, static_cast<int>(std::max(1.0, std::floor(free_bytes / cost.activation_bytes))));
    }
  }
  return fit;
}

Timetable build_timetable(const Cluster& cluster, const GpuCatalog& catalog,
                          const TransformerConfig& model, const ParallelPlan& plan,
                          const Placement& placement, const RunOptions& options) {
  if (options.timetable) {
    const Timetable& t = *options.timetable;
    const int segments = plan.microbatches() * t.sequence_splits;
    if (t.ranks != plan.pp || t.microbatches != segments)
      throw PlanError(fmt::format(
          "{}: the timetable has {} ranks and {} microbatches; the plan needs pp {} and {} microbatches "
          "(gbs / (mbs x dp){})",
          options.timetable_file.empty() ? "--timetable" : options.timetable_file, t.ranks, t.microbatches, plan.pp, segments,
          t.sequence_splits > 1 ? fmt::format(" x {} sequence splits", t.sequence_splits) : ""));
    validate(t, options.timetable_file);
    return t;
  }
  if (options.sequence_splits > 1 && plan.vpp > 1)
    throw PlanError("sequence splits and virtual pipeline chunks cannot be combined; use --vpp 1");
  // The generators take the chunks per rank, or the sequence splits for seq1f1b, in one place.
  const int chunks_or_splits = options.sequence_splits > 1 ? options.sequence_splits : plan.vpp;
  Timetable t =
      options.schedule == "zb-auto" && chunks_or_splits == 1
          ? make_zb_auto(plan.pp, plan.microbatches(),
                         zb_auto_estimates(cluster, catalog, model, plan, placement,
                                           options.memory_limit_microbatches))
          : make_timetable(options.schedule, plan.pp, plan.microbatches(), chunks_or_splits);
  validate(t);
  return t;
}

// What the pipeline ranks wait for around their sends: Megatron-LM's 1F1B waits for each batch of
// sends and receives unless --overlap-p2p-comm, its interleaved schedule only with
// --no-overlap-p2p-communication (its default since October 2023); the other schedules' runtimes (and a
// timetable file, whose runtime is unknown) leave sends in flight unless --blocking-p2p says the
// runtime waits for them.
P2pSync p2p_sync(const RunOptions& options, const Timetable& t) {
  if (options.overlap_p2p_comm) return P2pSync::kAsync;
  if (!options.timetable && t.kind == "1f1b") return P2pSync::kSeparateWithinPhase;
  if (!options.timetable && t.kind == "interleaved")
    return options.no_overlap_p2p_comm ? P2pSync::kBatched : P2pSync::kAsync;
  // A receive posted once the previous op's sends are done: Megatron's 1F1B warmup and
  // cooldown wait exactly so (P2pSync::kSeparateWithinPhase).
  if (options.blocking_p2p) return P2pSync::kSeparateWithinPhase;
  return P2pSync::kAsync;
}

// Position of every virtual stage along the path(s) that visit it: which model slice it holds.
std::vector<int> stage_slices(const Timetable& t, int& slices) {
  std::vector<int> slice_of(static_cast<std::size_t>(t.stages()), 0);
  if (t.paths.empty()) {
    for (int s = 0; s < t.stages(); ++s) slice_of[s] = s;
    slices = t.stages();
    return slice_of;
  }
  slices = static_cast<int>(t.paths.front().size());
  for (const auto& path : t.paths) {
    if (static_cast<int>(path.size()) != slices)
      throw PlanError("every path of the timetable must visit the same number of stages");
    for (std::size_t i = 0; i < path.size(); ++i) slice_of[path[i]] = static_cast<int>(i);
  }
  return slice_of;
}

// Seq1F1B runs each microbatch as k sequence segments: each costs and keeps 1/k of it (causal
// attention makes later segments somewhat costlier; the even split is the schedule's own model).
ChunkCost per_segment(ChunkCost cost, int segments) {
  if (segments <= 1) return cost;
  const double k = segments;
  for (double* field : {&cost.forward_s, &cost.backward_input_s, &cost.backward_weight_s,
                        &cost.recompute_s, &cost.backward_overlap_s, &cost.tp_comm_forward_s,
                        &cost.tp_comm_backward_s, &cost.tp_bytes_forward, &cost.tp_bytes_backward,
                        &cost.backward_transient_bytes,
                        &cost.forward_flops, &cost.backward_input_flops, &cost.backward_weight_flops,
                        &cost.recompute_flops, &cost.activation_bytes, &cost.weight_grad_bytes,
                        &cost.output_bytes})
    *field /= k;
  return cost;
}

// Routes of each worker pair's flows, one per tensor-parallel GPU pair, built on first use.
class PlacementRoutes : public TransferRoutes {
 public:
  PlacementRoutes(const Cluster& cluster, const Placement& placement, double wan_compression)
      : cluster_(cluster), placement_(placement), wan_compression_(wan_compression) {
    // A pipeline's workers send to their two neighbours, each way: about two pairs a worker.
    cache_.reserve(2 * static_cast<std::size_t>(placement.workers()));
  }
  const std::vector<std::span<const int>>& routes(int src, int dst) override {
    return pair(src, dst).routes;
  }
  double wire_share(int src, int dst) override { return pair(src, dst).wire_share; }

 private:
  // A worker pair's flow routes and the share of its bytes on the wire, found once.
  struct WorkerPair {
    std::vector<std::span<const int>> routes;
    double wire_share = 1;
  };
  const WorkerPair& pair(int src, int dst) {
    const std::uint64_t key = static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32 |
                              static_cast<std::uint32_t>(dst);
    auto [it, inserted] = cache_.try_emplace(key);
    if (inserted) {
      const auto from = placement_.worker_gpus(src);
      const auto to = placement_.worker_gpus(dst);
      for (std::size_t t = 0; t < from.size(); ++t) {
        const std::span<const int> route = cluster_.route(from[t], to[t]);
        it->second.routes.push_back(route);
        for (int link : route)
          if (cluster_.links()[link].link_class == LinkClass::kWan)
            it->second.wire_share = 1 / wan_compression_;
      }
    }
    return it->second;
  }

  const Cluster& cluster_;
  const Placement& placement_;
  double wan_compression_;
  // By src << 32 | dst; its nodes stay put, so routes() can hand out references.
  std::unordered_map<std::uint64_t, WorkerPair> cache_;
};

// What one GPU of `worker` gets in its expert-parallel group's all-to-all: the group is the ep
// consecutive replicas around it (Megatron order tp-cp-ep-dp-pp) at the same tensor-parallel
// index; the alpha-beta all-to-all on their routes (sim/collectives/alpha_beta.hpp) gives its
// drain rate and latency. Empty for ep == 1.
ExpertParallelLinks expert_parallel_links(const Cluster& cluster, const ParallelPlan& plan,
                                          const Placement& placement, int worker) {
  if (plan.ep < 2) return {};
  const int first_replica = placement.replica_of(worker) / plan.ep * plan.ep;
  std::vector<GpuId> group;
  for (int e = 0; e < plan.ep; ++e) group.push_back(placement.gpu(first_replica + e, placement.rank_of(worker), 0));
  double latency = 0;
  for (GpuId from : group)
    for (GpuId to : group)
      if (from != to) latency = std::max(latency, cluster.route_latency_s(from, to));
  // Any size works: the fit is exact for the closed form; 1 GiB keeps the drain term dominant.
  const double bytes = 1024.0 * 1024 * 1024;
  const double seconds = alpha_beta_collective_s(cluster, CollectiveOp::kAllToAll, CollectiveAlgo::kRing, group, bytes);
  const double leaving = bytes * (plan.ep - 1) / plan.ep;
  return ExpertParallelLinks{leaving / (seconds - latency), latency};
}

// What one GPU of `worker` gets in its context-parallel ring: each of the worker's tp rings (one
// per tensor-parallel index, the cp GPUs in rank order) sends its blocks at the same time, so
// their routes' shared links are shared (ring_bottleneck). Empty for cp == 1.
ContextParallelLinks context_parallel_links(const Cluster& cluster, const Placement& placement,
                                            int worker) {
  if (placement.cp < 2) return {};
  std::vector<std::vector<GpuId>> rings;
  for (int t = 0; t < placement.tp; ++t) rings.push_back(placement.context_parallel_gpus(worker, t));
  const RingBottleneck ring = ring_bottleneck(cluster, rings);
  return {ring.bandwidth_bytes_per_s, ring.latency_s};
}

std::vector<PartitionStage> partition_stages(const Cluster& cluster, const GpuCatalog& catalog,
                                             const TransformerConfig& model, const ParallelPlan& plan,
                                             const Placement& placement, const Timetable& timetable,
                                             GpuProfiles& profiles) {
  const std::vector<int> in_flight = peak_activations(
      timetable, timetable.split_backward ? ActivationRelease::kAtWeight : ActivationRelease::kAtBackward);
  const double segments = timetable.sequence_splits;
  const auto seconds = [](const ChunkCost& c) {
    return c.forward_s + c.fused_backward_s();
  };
  std::vector<PartitionStage> stages;
  // Costs depend on the GPU type, its measured profile, the worker's links and whether the stage
  // holds the embedding / LM head: the layers are weighed as the replay will cost them.
  std::map<std::tuple<std::string, const calibration::Profile*, std::array<double, 6>, bool, bool>,
           std::pair<ChunkCost, ChunkCost>>
      cache;
  for (int rank = 0; rank < plan.pp; ++rank) {
    const bool first = rank == 0;
    const bool last = rank + 1 == plan.pp;
    PartitionStage stage;
    stage.capacity_bytes = std::numeric_limits<double>::infinity();
    std::string types;
    for (int replica = 0; replica < plan.dp; ++replica) {
      const int worker = replica * plan.pp + rank;
      const auto gpus = placement.tensor_parallel_gpus(worker);
      const std::string& type = cluster.gpu(gpus.front()).gpu_type;
      if (types.find(type) == std::string::npos) types += (types.empty() ? "" : ", ") + type;
      const WorkerLinks links = worker_links(cluster, plan, placement, worker);
      const calibration::Profile* profile = profiles.of(gpus.front());
      auto [it, inserted] = cache.try_emplace({type, profile, links.figures(), first, last});
      if (inserted) {
        const GpuSpec& spec = catalog.at(type);
        // One layer as most of the model's are: past DeepSeek's dense first layers (0 for others).
        const int typical = model.first_layer_past_dense(1);
        const auto cost = [&](const ChunkSpan& span) {
          return cost_chunk(model, plan, spec, span, links.tp, profile, nullptr, links.ep, links.cp);
        };
        it->second = {cost(ChunkSpan{typical, 1, false, false}), cost(ChunkSpan{typical, 1, first, last})};
      }
      const ChunkCost& layer = it->second.first;
      const ChunkCost& with_ends = it->second.second;
      const int versions =
          timetable.weight_versions.empty() ? 1 : timetable.weight_versions[rank];
      const auto static_bytes = [&](double params, double expert_params) {
        const StaticMemory m = static_memory(params - expert_params, expert_params, plan);
        return m.total() + (versions - 1) * m.weights_bytes;
      };
      // Ops in flight are segments with sequence splits: k of them make one microbatch.
      const double in_flight_microbatches = in_flight[rank] / segments;
      stage.layer_s = std::max(stage.layer_s, seconds(layer));
      stage.fixed_s = std::max(stage.fixed_s, seconds(with_ends) - seconds(layer));
      stage.layer_bytes = std::max(stage.layer_bytes, static_bytes(layer.params, layer.expert_params) + layer.activation_bytes * in_flight_microbatches);
      stage.fixed_bytes = std::max(
          stage.fixed_bytes, static_bytes(with_ends.params - layer.params,
                                              with_ends.expert_params - layer.expert_params) +
                                 (with_ends.activation_bytes - layer.activation_bytes) * in_flight_microbatches);
      stage.capacity_bytes = std::min(stage.capacity_bytes, catalog.at(type).hbm_bytes);
    }
    stage.name = fmt::format("stage {} ({})", rank, types);
    stages.push_back(std::move(stage));
  }
  return stages;
}

// --placement site-aware: the site order whose WAN links carry the plan's traffic fastest
// (sim/site_placement.hpp). The traffic does not depend on the placement: it is estimated from
// an even layer split costed on the first GPU's type, with Megatron's rank order standing in for
// the links that only set times.
Placement site_aware_placement(const Cluster& cluster, const GpuCatalog& catalog,
                               const TransformerConfig& model, const ParallelPlan& plan,
                               const Placement& megatron, int sync_every,
                               std::vector<std::string>* site_order) {
  const GpuSpec& spec = catalog.at(cluster.gpu(0).gpu_type);
  const TensorParallelLinks tp_links = tensor_parallel_links(cluster, megatron.tensor_parallel_gpus(0));
  const ExpertParallelLinks ep_links = expert_parallel_links(cluster, plan, megatron, 0);
  const int layers = std::max(1, model.num_layers / plan.pp);
  PlacementTraffic traffic;
  for (int rank = 0; rank < plan.pp; ++rank) {
    // The rank's share of an even split (DeepSeek's dense first layers on the first rank).
    const int first_layer = std::min(rank * layers, model.num_layers - layers);
    const ChunkCost cost = cost_chunk(model, plan, spec, ChunkSpan{first_layer, layers, rank == 0, rank + 1 == plan.pp},
                                      tp_links, ep_links);
    // Reduced once every sync_every steps.
    traffic.gradient_bytes.push_back(cost.params * bytes_per_param(plan).gradients / sync_every);
    if (rank == 0) {
      const double output = cost.output_bytes / plan.pipeline_send_shards();
      traffic.activation_bytes = output * 2 * plan.microbatches();
    }
  }
  SitePlacementReport report;
  Placement placement = place_across_sites(cluster, plan.tp, plan.pp, plan.dp, traffic, &report);
  if (site_order != nullptr)
    for (int unit : report.candidates[report.chosen].site_order)
      site_order->push_back(report.machines ? cluster.node_name(unit) : cluster.sites()[unit].name);
  return placement;
}

// Every GPU type of the cluster must have tensor cores for the plan's precision: a run never
// falls back to the fp32 peak (models/precision.hpp). Each type is checked once.
void check_cluster_precision(const Cluster& cluster, const GpuCatalog& catalog, const ParallelPlan& plan) {
  std::set<std::string> checked;
  for (GpuId g = 0; g < cluster.gpu_count(); ++g)
    if (const std::string& type = cluster.gpu(g).gpu_type; checked.insert(type).second)
      check_precision(catalog.at(type), plan);
}

// Orders per-GPU entries by GPU id. A GPU is listed once, so the order is unique; sorting the ids
// with their positions and moving each entry once is far cheaper than sorting the entries
// themselves, which carry a string (at 65,536 GPUs std::sort on them took 2,700 instructions
// per GPU).
void sort_by_gpu(std::vector<GpuMemory>& entries) {
  std::vector<std::pair<GpuId, std::size_t>> order(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) order[i] = {entries[i].gpu, i};
  std::sort(order.begin(), order.end());
  std::vector<GpuMemory> sorted;
  sorted.reserve(entries.size());
  for (const auto& entry : order) sorted.push_back(std::move(entries[entry.second]));
  entries = std::move(sorted);
}

}  // namespace

Placement place_run(const Cluster& cluster, const GpuCatalog& catalog, const TransformerConfig& model,
                    const RunOptions& options, ParallelPlan& plan, std::vector<std::string>* site_order) {
  check_cluster_precision(cluster, catalog, plan);
  const Placement megatron = place_plan(cluster, model, plan);
  if (!options.site_placement) return megatron;
  if (plan.cp > 1)
    throw PlanError(fmt::format(
        "--placement site-aware lays out tp x pp x dp plans; it does not place context-parallel "
        "groups (--context-parallel-size {}): use --placement megatron",
        plan.cp));
  return site_aware_placement(cluster, catalog, model, plan, megatron, std::max(1, options.sync_every),
                              site_order);
}

Placement place_plan(const Cluster& cluster, const TransformerConfig& model, ParallelPlan& plan) {
  const long long gpus = cluster.gpu_count();
  for (const auto& [flag, value] : {std::pair{"--tp", plan.tp}, std::pair{"--pp", plan.pp}, std::pair{"--vpp", plan.vpp},
                                     std::pair{"--mbs", plan.micro_batch_size},
                                     std::pair{"--gbs", plan.global_batch_size},
                                     std::pair{"--seq-length", plan.seq_length}})
    if (value < 1) throw PlanError(fmt::format("{} {} must be >= 1", flag, value));
  check_context_parallel(plan);
  // Products in 64 bits: flags near INT_MAX must be refused, not wrapped into a division by zero.
  const long long model_parallel = static_cast<long long>(plan.tp) * plan.cp * plan.pp;
  if (model_parallel > gpus || gpus % model_parallel != 0) {
    if (plan.cp == 1)
      throw PlanError(fmt::format(
          "tp {} x pp {} = {} does not divide the cluster's {} GPUs, so tp*pp*dp cannot equal the GPU "
          "count",
          plan.tp, plan.pp, model_parallel, gpus));
    throw PlanError(fmt::format(
        "tp {} x cp {} x pp {} = {} does not divide the cluster's {} GPUs, so tp*cp*pp*dp cannot "
        "equal the GPU count",
        plan.tp, plan.cp, plan.pp, model_parallel, gpus));
  }
  plan.dp = static_cast<int>(gpus / model_parallel);
  if (plan.cp > 1 && plan.ep > 1)
    throw PlanError(fmt::format(
        "--context-parallel-size {} with --expert-model-parallel-size {}: expert-parallel groups "
        "across context-parallel ranks are not modelled; use ep 1 or cp 1",
        plan.cp, plan.ep));
  if (model.num_heads % plan.tp != 0)
    throw PlanError(fmt::format("tp {} does not divide the model's {} attention heads", plan.tp,
                                model.num_heads));
  if (static_cast<long long>(plan.pp) * plan.vpp > model.num_layers)
    throw PlanError(fmt::format(
        "pp {} x vpp {} = {} model chunks exceed the model's {} layers (each chunk holds at least one)",
        plan.pp, plan.vpp, static_cast<long long>(plan.pp) * plan.vpp, model.num_layers));
  check_data_parallel_sharding(plan);
  const long long per_step = static_cast<long long>(plan.micro_batch_size) * plan.dp;
  if (plan.global_batch_size % per_step != 0)
    throw PlanError(fmt::format(
        "global batch {} is not divisible by micro-batch {} x data-parallel {} = {}",
        plan.global_batch_size, plan.micro_batch_size, plan.dp, per_step));
  Placement placement{plan.tp, plan.pp, plan.dp};
  placement.cp = plan.cp;
  return placement;
}

RunResult simulate_training(const Cluster& cluster, const GpuCatalog& catalog,
                            const TransformerConfig& model, const RunOptions& options,
                            ReplayObserver* observer) {
  RunResult result;
  result.plan = options.plan;
  ParallelPlan& plan = result.plan;
  if (!(options.wan_compression >= 1) || !std::isfinite(options.wan_compression))
    throw PlanError(fmt::format("--wan-compression {} must be a finite ratio >= 1", options.wan_compression));
  if (options.plan.seq_length < 1)
    throw PlanError(fmt::format("--seq-length {} must be >= 1", options.plan.seq_length));
  if (options.sequence_splits < 1 || options.sequence_splits > options.plan.seq_length)
    throw PlanError(fmt::format("--seq-splits {} must be between 1 and the sequence length {} (segments of "
                                "at least one token)",
                                options.sequence_splits, options.plan.seq_length));
  if (options.sync_every < 1)
    throw PlanError(fmt::format("--sync-every {} must be >= 1 (1: every step)", options.sync_every));
  if (options.plan.cp > 1 && options.sequence_splits > 1)
    throw PlanError(fmt::format(
        "--seq-splits {} with --context-parallel-size {}: Seq1F1B's sequence segments over a "
        "context-parallel ring are not modelled; use one of them",
        options.sequence_splits, options.plan.cp));
  if (options.sync_every > 1 && options.plan.effective_zero_stage() == 3)
    throw PlanError(fmt::format(
        "--sync-every {} keeps replicas apart between synchronisations, but --zero-stage 3 shards "
        "the weights across them: use ZeRO stage 0, 1 or 2 with local steps",
        options.sync_every));
  result.wan_compression = options.wan_compression;
  result.sync_every = options.sync_every;
  const Placement placement = place_run(cluster, catalog, model, options, plan, &result.site_order);
  result.overlap_grad_reduce = options.overlap_grad_reduce;
  result.overlap_param_gather = options.overlap_param_gather;
  if (options.overlap_param_gather &&
      (!options.overlap_grad_reduce || plan.effective_zero_stage() < 1 || plan.effective_zero_stage() > 2))
    throw PlanError(
        "--overlap-param-gather needs the distributed optimizer (--use-distributed-optimizer or "
        "--zero-stage 1 or 2) and --overlap-grad-reduce, as Megatron-LM requires");
  result.alpha_beta_collectives = options.alpha_beta_collectives;
  if (!(options.ddp_bucket_params >= 0) || !std::isfinite(options.ddp_bucket_params))
    throw PlanError(fmt::format("--ddp-bucket-size {} must be a finite number >= 0 of parameters (0: "
                                "Megatron's default)",
                                options.ddp_bucket_params));
  if (options.ddp_bucket_params > 0 && model.total_params() / options.ddp_bucket_params > kMaxBuckets)
    throw PlanError(fmt::format("--ddp-bucket-size {} splits the model's {:.3g} parameters into {:.3g} "
                                "buckets; expected at most {:.0e} (Megatron's default is 40M parameters)",
                                options.ddp_bucket_params, model.total_params(),
                                model.total_params() / options.ddp_bucket_params, kMaxBuckets));
  check_replay_size(plan, options.sequence_splits);
  const bool zb_auto_generated = !options.timetable && options.schedule == "zb-auto" &&
                                 plan.vpp == 1 && options.sequence_splits == 1;
  RunOptions timetable_options = options;
  if (zb_auto_generated && options.memory_limit_microbatches == 0)
    timetable_options.memory_limit_microbatches =
        zb_auto_memory_fit(cluster, catalog, model, plan, placement, options);
  if (zb_auto_generated) result.zb_auto_memory_limit = timetable_options.memory_limit_microbatches;
  Timetable timetable = build_timetable(cluster, catalog, model, plan, placement, timetable_options);
  const P2pSync p2p = p2p_sync(options, timetable);
  if (p2p == P2pSync::kBatched) add_megatron_interleaved_p2p_links(timetable);
  result.schedule = timetable.kind;
  result.offload_fraction = options.offload_fraction;
  plan.vpp = timetable.chunks_per_rank;
  int slices = 0;
  const std::vector<int> slice_of = stage_slices(timetable, slices);
  const std::string slices_detail =
      timetable.paths.empty() ? fmt::format("pp {} x vpp {}", plan.pp, plan.vpp)
                              : fmt::format("{} stages along each {} path", slices, timetable.kind);
  const int split_choices = (options.first_stage_layers != 0 || options.last_stage_layers != 0) +
                            !options.layers_per_stage.empty() + options.balance_layers;
  if (split_choices > 1)
    throw PlanError(
        "--layers-per-stage, --balance-layers and --decoder-first/last-pipeline-num-layers each "
        "choose the layer split; give only one of them");
  GpuProfiles profiles(cluster, options.profile_path);
  if (options.balance_layers)
    result.layers_per_stage = balanced_layers(cluster, catalog, model, plan, placement, timetable, profiles);
  else if (!options.layers_per_stage.empty())
    result.layers_per_stage =
        checked_layers_per_stage(model, slices, slices_detail, options.layers_per_stage);
  else
    result.layers_per_stage = partition_layers(model, slices, slices_detail, options);

  // Layer span of each model slice.
  std::vector<ChunkSpan> spans;
  int next_layer = 0;
  for (int s = 0; s < slices; ++s) {
    spans.push_back(ChunkSpan{next_layer, result.layers_per_stage[s], s == 0, s + 1 == slices});
    next_layer += result.layers_per_stage[s];
  }

  // The profiles used, in the order the workers first use them.
  const auto profile_for = [&](GpuId gpu) {
    const calibration::Profile* profile = profiles.of(gpu);
    const std::string& path = profiles.path_of(gpu);
    if (profile && std::find(result.profiles.begin(), result.profiles.end(), path) == result.profiles.end())
      result.profiles.push_back(path);
    return profile;
  };

  // Cost every chunk on its own GPU type and links; a cache keyed by (GPU type, profile, links,
  // slice) keeps it cheap, and counts each distinct chunk's cost sources once.
  ReplayInputs inputs;
  inputs.timetable = &timetable;
  inputs.replicas = plan.dp;
  inputs.costs.resize(static_cast<std::size_t>(placement.workers()));
  std::map<std::tuple<std::string, const calibration::Profile*, std::array<double, 6>, int>, ChunkCost>
      cost_cache;
  std::vector<double> params_on_gpu(static_cast<std::size_t>(placement.workers()), 0);
  std::vector<double> expert_params_on_gpu(static_cast<std::size_t>(placement.workers()), 0);
  for (int w = 0; w < placement.workers(); ++w) {
    const auto gpus = placement.worker_gpus(w);
    const std::string& type = cluster.gpu(gpus.front()).gpu_type;
    for (GpuId g : gpus)
      if (cluster.gpu(g).gpu_type != type)
        throw PlanError(fmt::format("the {} of GPUs {}..{} mixes GPU types {} and {}",
                                    plan.cp > 1 ? "tensor- and context-parallel group" : "tensor-parallel group",
                                    gpus.front(), gpus.back(), type, cluster.gpu(g).gpu_type));
    const WorkerLinks links = worker_links(cluster, plan, placement, w);
    const calibration::Profile* profile = profile_for(gpus.front());
    const int rank = placement.rank_of(w);
    for (int c = 0; c < plan.vpp; ++c) {
      const int slice = slice_of[timetable.stage(rank, c)];
      auto [it, inserted] = cost_cache.try_emplace({type, profile, links.figures(), slice});
      if (inserted)
        it->second = cost_chunk(model, plan, catalog.at(type), spans[slice], links.tp, profile,
                                &result.cost_sources, links.ep, links.cp);
      ChunkCost cost = per_segment(it->second, timetable.sequence_splits);
      // Megatron-core sends the whole activation from every tensor-parallel rank, or only its
      // sequence shard with sequence parallelism (its slice with scatter/gather).
      cost.output_bytes /= plan.pipeline_send_shards();
      inputs.costs[w].push_back(cost);
      params_on_gpu[w] += cost.params;
      expert_params_on_gpu[w] += cost.expert_params;
    }
  }

  PlacementRoutes routes(cluster, placement, options.wan_compression);
  inputs.sync = data_parallel_sync(cluster, plan, placement, inputs.costs,
                                   DataParallelOptions{options.overlap_grad_reduce,
                                                       options.overlap_param_gather,
                                                       options.ddp_bucket_params,
                                                       options.wan_compression});
  // Tied embeddings first (index 0 when active), then DualPipe's mirrored copies.
  const RankPairAllReduce tied_embedding =
      tied_embedding_all_reduce(cluster, model, plan, placement, timetable, options.wan_compression);
  if (tied_embedding.active()) inputs.rank_pairs.push_back(tied_embedding);
  for (RankPairAllReduce& pair : mirrored_copy_all_reduces(cluster, plan, placement, timetable, slice_of,
                                                           inputs.costs, options.wan_compression))
    inputs.rank_pairs.push_back(std::move(pair));
  inputs.optimizer_sync = optimizer_sync(cluster, plan, placement);
  inputs.alpha_beta_collectives = options.alpha_beta_collectives;

  for (int w = 0; w < placement.workers(); ++w) {
    // PipeDream's weight stashing keeps extra versions of the weights (not of their gradients or
    // optimizer state).
    const StaticMemory memory =
        static_memory(params_on_gpu[w] - expert_params_on_gpu[w], expert_params_on_gpu[w], plan);
    const int versions =
        timetable.weight_versions.empty() ? 1 : timetable.weight_versions[placement.rank_of(w)];
    const double gathered =
        inputs.sync.empty() ? 0.0 : gathered_weight_bytes(inputs.sync[placement.rank_of(w)]);
    inputs.static_bytes.push_back(memory.total() + (versions - 1) * memory.weights_bytes + gathered);
  }

  inputs.routes = &routes;
  inputs.links = network_links(cluster);  // with WAN bandwidth traces where the cluster has them
  inputs.observer = observer;
  inputs.offload_fraction = options.offload_fraction;
  inputs.p2p = p2p;
  inputs.connection_window_bytes = socket_connection_window_bytes(options.nccl_sockets);
  for (int w = 0; w < placement.workers(); ++w)
    inputs.host_copy_bytes_per_s.push_back(
        catalog.at(cluster.gpu(placement.worker_gpus(w).front()).gpu_type).pcie_bytes_per_s);

  const ReplayStats stats = replay_iteration(inputs);
  std::vector<double> link_bytes = stats.link_bytes;
  link_bytes.resize(cluster.links().size(), 0);
  // DiLoCo-style local steps: one iteration in sync_every synchronises, the others only step
  // their optimizer; time and traffic are the average over those iterations.
  const double h = options.sync_every;
  result.iteration_time_s = stats.iteration_s;
  if (options.sync_every > 1) {
    ReplayInputs local = inputs;
    local.sync.clear();
    local.observer = nullptr;
    const ReplayStats local_stats = replay_iteration(local);
    result.iteration_time_s = (stats.iteration_s + (h - 1) * local_stats.iteration_s) / h;
    for (std::size_t l = 0; l < link_bytes.size(); ++l)
      link_bytes[l] = (link_bytes[l] + (h - 1) * local_stats.link_bytes[l]) / h;
  }
  // The context-parallel rings are costed inside the ops (as tensor-parallel collectives are);
  // their bytes go on the links of each GPU's route to the next GPU of its ring.
  if (plan.cp > 1) {
    result.context_parallel_exposed_s_per_rank.assign(static_cast<std::size_t>(plan.pp), 0);
    for (int w = 0; w < placement.workers(); ++w) {
      ContextParallelTraffic per_microbatch;
      for (const ChunkCost& cost : inputs.costs[w]) {
        const ContextParallelTraffic chunk = context_parallel_per_microbatch(cost, plan.recompute);
        per_microbatch.exposed_s += chunk.exposed_s;
        per_microbatch.bytes += chunk.bytes;
      }
      const double bytes = per_microbatch.bytes * plan.microbatches();
      if (placement.replica_of(w) == 0)
        result.context_parallel_exposed_s_per_rank[placement.rank_of(w)] =
            per_microbatch.exposed_s * plan.microbatches();
      for (int t = 0; t < plan.tp; ++t) {
        const std::vector<GpuId> ring = placement.context_parallel_gpus(w, t);
        for (std::size_t c = 0; c < ring.size(); ++c) {
          for (LinkId link : cluster.route(ring[c], ring[(c + 1) % ring.size()])) link_bytes[link] += bytes;
          result.context_parallel_bytes += bytes;
        }
      }
    }
  }
  for (std::size_t r = 0; r < stats.sync_busy_s.size(); ++r) {
    result.gradient_reduce_s_per_rank.push_back(stats.sync_busy_s[r] / h);
    result.gradient_reduce_exposed_s_per_rank.push_back(stats.sync_exposed_s[r] / h);
    result.parameter_gather_s_per_rank.push_back(stats.parameter_gather_s[r] / h);
  }
  const std::size_t first_mirror = tied_embedding.active() ? 1 : 0;
  for (std::size_t p = first_mirror; p < inputs.rank_pairs.size(); ++p) {
    const RankPairAllReduce& pair = inputs.rank_pairs[p];
    result.mirrored_copy_ranks.push_back({pair.ranks[0], pair.ranks[1]});
    result.mirrored_copy_reduce_s = std::max(result.mirrored_copy_reduce_s, stats.rank_pair_s[p]);
    result.mirrored_copy_bytes_per_gpu = std::max(result.mirrored_copy_bytes_per_gpu, pair.collective.bytes);
  }
  if (tied_embedding.active()) {
    result.tied_embedding_ranks[0] = tied_embedding.ranks[0];
    result.tied_embedding_ranks[1] = tied_embedding.ranks[1];
    result.tied_embedding_reduce_s = stats.rank_pair_s[0];
    result.tied_embedding_bytes_per_gpu = tied_embedding.collective.bytes;
  }
  result.pipeline_time_s = stats.pipeline_end_s;
  result.events = stats.events;
  result.offloaded_bytes = stats.offloaded_bytes;
  result.transfers = stats.transfers;
  result.tokens_per_iteration = static_cast<double>(plan.global_batch_size) * plan.seq_length;
  result.tokens_per_s = result.tokens_per_iteration / result.iteration_time_s;
  result.model_flops = model_flops_per_iteration(model, plan);

  result.bubble_fraction_per_rank.assign(static_cast<std::size_t>(plan.pp), 0);
  for (int w = 0; w < placement.workers(); ++w)
    result.bubble_fraction_per_rank[placement.rank_of(w)] +=
        (1 - stats.busy_s[w] / stats.pipeline_end_s) / plan.dp;
  for (double b : result.bubble_fraction_per_rank) result.bubble_fraction += b / plan.pp;

  // Per-GPU memory, money, energy and peak FLOP/s.
  double peak_flops = 0;
  double joules = 0;
  for (int w = 0; w < placement.workers(); ++w) {
    const int rank = placement.rank_of(w);
    double optimizer_s = 0;
    for (const ChunkCost& cost : inputs.costs[w]) optimizer_s += cost.optimizer_step_s;
    const double static_bytes = inputs.static_bytes[w];
    for (GpuId g : placement.worker_gpus(w)) {
      const GpuSpec& spec = catalog.at(cluster.gpu(g).gpu_type);
      GpuMemory m{g, spec.key, static_bytes, stats.peak_activation_bytes[w], spec.hbm_bytes};
      result.memory.push_back(m);
      if (m.peak_bytes() > m.capacity_bytes) result.oom.push_back(m);
      // MFU against the peak of the dtype the linear layers' GEMMs run in (fp8 under
      // --fp8-format, fp32 where TF32 has no tensor cores), positive on every GPU that passed
      // check_precision.
      peak_flops += spec.peak(spec.matmul_dtype(linear_gemm_dtype(plan)));
      result.gpu_usd += spec.usd_per_hour * result.iteration_time_s / units::kSecondsPerHour;
      // A busy GPU is charged its board power limit, an idle one its idle power: an upper
      // bound on energy, since kernels rarely hold the GPU at its power limit.
      const double busy = stats.busy_s[w] + optimizer_s;
      // Gradient reduction hidden behind the backward is already busy time.
      const double reduce = result.gradient_reduce_exposed_s_per_rank[rank];
      const double idle = std::max(0.0, result.iteration_time_s - busy - reduce);
      joules += (busy + reduce) * spec.max_power_w + idle * spec.idle_power_w;
    }
  }
  sort_by_gpu(result.memory);
  sort_by_gpu(result.oom);
  for (const GpuMemory& m : result.memory) result.peak_memory_bytes = std::max(result.peak_memory_bytes, m.peak_bytes());
  result.mfu = result.model_flops / (result.iteration_time_s * peak_flops);
  result.energy_kwh = joules / 3.6e6;

  for (std::size_t l = 0; l < link_bytes.size(); ++l) {
    const Link& link = cluster.links()[l];
    const double bytes = link_bytes[l];
    switch (link.link_class) {
      case LinkClass::kIntraNode: result.bytes_intra_node += bytes; break;
      case LinkClass::kNic: result.bytes_nic += bytes; break;
      case LinkClass::kFabric: break;  // node uplinks carry bytes the NICs already counted
      case LinkClass::kWan:
        result.bytes_wan += bytes;
        result.egress_usd += bytes * link.egress_usd_per_byte;
        if (bytes > 0) result.wan_links.push_back(WanLinkTraffic{std::string(link.name), bytes, bytes * link.egress_usd_per_byte});
        break;
    }
  }
  result.cost_usd = result.gpu_usd + result.egress_usd;
  result.cost_usd_per_million_tokens = result.cost_usd / result.tokens_per_iteration * 1e6;
  return result;
}

}  // namespace hetsim

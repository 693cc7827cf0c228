#include "sim/serving/serving_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>

#include "base/error.hpp"
#include "sim/engine.hpp"
#include "sim/gpu_profiles.hpp"
#include "sim/ring_collective.hpp"
#include "sim/serving/route_transfers.hpp"

namespace hetsim::serving {

namespace {

enum EventKind : std::uint32_t { kArrival = 0, kStepDone = 1, kResplit = 2, kNothingToMove = 3 };

// Tags of the transfers on the links: a request's KV cache (disaggregated serving) or a replica's
// re-split, told apart by the lowest bit.
std::uint64_t kv_cache_tag(int request) { return static_cast<std::uint64_t>(request) << 1; }
std::uint64_t resplit_tag(int replica) { return (static_cast<std::uint64_t>(replica) << 1) | 1; }

// The stage holding `layer` under `split`.
int stage_of(const std::vector<int>& split, int layer) {
  int s = 0;
  for (int end = split[0]; layer >= end; end += split[++s]) {
  }
  return s;
}

// One micro-batch in flight on a replica: vLLM's virtual engine, one per pipeline stage, each
// scheduling its own sequences in its share of the KV cache.
struct MicroBatch {
  std::unique_ptr<ReplicaScheduler> scheduler;
  Step step;
  bool busy = false;
};

struct Replica {
  std::unique_ptr<ReplicaCost> cost;
  std::unique_ptr<ReplicaCost> draft;  // speculative decoding: the draft on stage 0's GPUs
  std::vector<MicroBatch> micro_batches;
  std::vector<double> stage_free_s;  // when each stage finishes the work handed to it so far
  std::vector<double> stage_kv_bytes_per_token;  // per GPU of each stage
  double accounted_s = 0;            // block_seconds is integrated up to here
  // A re-split: requested (no new iteration starts), then moving layers, then done.
  enum class Resplit { kNone, kDraining, kMoving, kDone } resplit = Resplit::kNone;
  long resplit_blocks = 0;                             // the tightest stage's blocks after it
  std::vector<double> resplit_kv_bytes_per_token;      // per GPU of each stage after it
  Reconfiguration reconfiguration;
  bool paused() const { return resplit == Resplit::kDraining || resplit == Resplit::kMoving; }
  bool drained() const {
    for (const MicroBatch& m : micro_batches)
      if (m.busy) return false;
    return true;
  }
  long used_blocks() const {
    long used = 0;
    for (const MicroBatch& m : micro_batches) used += m.scheduler->used_blocks();
    return used;
  }
  int outstanding() const {
    int n = 0;
    for (const MicroBatch& m : micro_batches) n += m.scheduler->outstanding();
    return n;
  }
};

class ServingReplay : public EventHandler, public TransferListener {
 public:
  ServingReplay(const Cluster& cluster, const TransformerConfig& model, const std::vector<Request>& requests,
                std::vector<Replica>& replicas, ServingResult& result, const ServingOptions& options,
                ServingObserver* observer)
      : cluster_(cluster), model_(model), requests_(requests), replicas_(replicas), result_(result),
        options_(options), router_(options.router), decode_router_(options.router), observer_(observer),
        prefill_replicas_(options.prefill_replicas) {
    if (prefill_replicas_ > 0 || options.resplit_at_s >= 0)
      transfers_ = std::make_unique<RouteTransfers>(engine_, cluster_, *this);
  }

  void start() {
    id_ = engine_.add_handler(*this);
    engine_.schedule(requests_.front().arrival_s, id_, kArrival, 0);
    if (options_.resplit_at_s >= 0) engine_.schedule(options_.resplit_at_s, id_, kResplit, 0);
    engine_.run();
    result_.events = static_cast<long>(engine_.events_processed());
  }

  void handle(const Event& event) override {
    if (event.kind == kArrival) {
      arrive(event.payload);
    } else if (event.kind == kResplit) {
      for (std::size_t r = 0; r < replicas_.size(); ++r) {
        replicas_[r].resplit = Replica::Resplit::kDraining;
        replicas_[r].reconfiguration.requested_s = engine_.now();
        move_layers_once_drained(static_cast<int>(r));
      }
    } else if (event.kind == kNothingToMove) {
      layers_arrived(static_cast<int>(event.payload));
    } else {
      finish_step(static_cast<int>(event.payload >> 32), static_cast<int>(event.payload & 0xffffffffu));
    }
  }

 private:
  void account(int r) {
    Replica& rep = replicas_[r];
    ReplicaStats& stats = result_.replicas[r];
    const double now = engine_.now();
    stats.block_seconds += static_cast<double>(rep.used_blocks()) * (now - rep.accounted_s);
    rep.accounted_s = now;
  }

  // The replica `router` picks among replicas first .. first + count - 1.
  int route(Router& router, int first, int count) {
    outstanding_.resize(count);
    for (int i = 0; i < count; ++i) outstanding_[i] = replicas_[first + i].outstanding();
    return first + router.pick(outstanding_);
  }

  void arrive(std::uint64_t index) {
    const Request& req = requests_[index];
    const int count = prefill_replicas_ > 0 ? prefill_replicas_ : static_cast<int>(replicas_.size());
    const int r = route(router_, 0, count);
    RequestOutcome& out = result_.requests[index];
    out.arrival_s = req.arrival_s;
    out.prompt_tokens = req.prompt_tokens;
    out.output_tokens = req.output_tokens;
    out.replica = r;
    if (prefill_replicas_ > 0) out.prefill_replica = r;
    out.first_token_s = -1;
    out.finish_s = -1;
    if (index + 1 < requests_.size())
      engine_.schedule(requests_[index + 1].arrival_s - engine_.now(), id_, kArrival, index + 1);
    enqueue(r, static_cast<int>(index), false);
  }

  // Inside the replica, the micro-batch with the fewest unfinished requests takes it (vLLM adds
  // a request to the virtual engine's scheduler with the fewest unfinished sequences).
  void enqueue(int r, int index, bool prefilled) {
    const Request& req = requests_[index];
    Replica& rep = replicas_[r];
    ++result_.replicas[r].requests;
    std::size_t m = 0;
    for (std::size_t i = 1; i < rep.micro_batches.size(); ++i)
      if (rep.micro_batches[i].scheduler->outstanding() < rep.micro_batches[m].scheduler->outstanding()) m = i;
    ReplicaScheduler& scheduler = *rep.micro_batches[m].scheduler;
    if (prefilled) {
      scheduler.enqueue_prefilled(index, req.prompt_tokens, req.output_tokens);
    } else {
      // A prefill replica's work ends with the first token.
      scheduler.enqueue(index, req.prompt_tokens, prefill_replicas_ > 0 ? 1 : req.output_tokens);
    }
    if (!rep.micro_batches[m].busy) start_step(r, static_cast<int>(m));
  }

  // A transfer on the links has fully arrived: a KV cache at its decode replica, which may now
  // decode the request, or a re-split's layers at their new stages.
  void on_transfer_done(std::uint64_t tag) override {
    const int index = static_cast<int>(tag >> 1);
    if ((tag & 1) != 0) {
      layers_arrived(index);
    } else {
      enqueue(result_.requests[index].replica, index, true);
    }
  }

  // Disaggregated serving: the prompt's KV cache goes from prefill replica p to a decode replica,
  // each GPU sending its shard to the GPU of the same stage and rank there, all at once, as flows
  // sharing the links with every other transfer in flight (route_transfers.hpp).
  void hand_over(int p, int request) {
    const int d = route(decode_router_, prefill_replicas_, static_cast<int>(replicas_.size()) - prefill_replicas_);
    const Replica& from = replicas_[p];
    const std::vector<GpuId>& src = result_.replicas[p].gpus;
    const std::vector<GpuId>& dst = result_.replicas[d].gpus;
    const std::size_t tp = src.size() / from.stage_kv_bytes_per_token.size();
    pieces_.clear();
    for (std::size_t g = 0; g < src.size(); ++g) {
      const double bytes = requests_[request].prompt_tokens * from.stage_kv_bytes_per_token[g / tp];
      pieces_.push_back({src[g], dst[g], bytes});
      result_.kv_transfer_bytes += bytes;
      result_.kv_transfer_egress_usd += bytes * cluster_.route_egress_usd_per_byte(src[g], dst[g]);
    }
    result_.requests[request].replica = d;
    transfers_->start(kv_cache_tag(request), pieces_);
  }

  // Plans micro-batch m's next iteration and sends it through the stages: each stage takes it
  // when the stage has finished what came before (first in, first out), so micro-batches overlap
  // on different stages and a slow stage leaves the others idle (the pipeline's bubbles).
  void start_step(int r, int m) {
    Replica& rep = replicas_[r];
    MicroBatch& mb = rep.micro_batches[m];
    account(r);
    if (rep.paused()) {
      move_layers_once_drained(r);
      return;
    }
    if (!mb.scheduler->plan(mb.step)) return;
    ReplicaStats& stats = result_.replicas[r];
    stats.peak_blocks_used = std::max(stats.peak_blocks_used, rep.used_blocks());
    const int pp = rep.cost->pp();
    stage_start_.assign(pp, 0);
    stage_s_.assign(pp, 0);
    double ready = engine_.now();
    double draft_s = 0;
    for (const IterationWork& pass : mb.step.draft_passes) draft_s += rep.draft->iteration_seconds(pass);
    stats.draft_busy_s += draft_s;
    for (int s = 0; s < pp; ++s) {
      stage_start_[s] = std::max(ready, rep.stage_free_s[s]);
      stage_s_[s] = rep.cost->stage_seconds(s, mb.step.work) + (s == 0 ? draft_s : 0);
      rep.stage_free_s[s] = stage_start_[s] + stage_s_[s];
      stats.stage_busy_s[s] += stage_s_[s];
      ready = rep.stage_free_s[s] + rep.cost->transfer_seconds(s, mb.step.work);
    }
    if (observer_ != nullptr) observer_->iteration(r, stage_start_, stage_s_, mb.step);
    mb.busy = true;
    stats.busy_s += ready - engine_.now();
    ++stats.iterations;
    engine_.schedule(ready - engine_.now(), id_, kStepDone,
                     (static_cast<std::uint64_t>(r) << 32) | static_cast<std::uint64_t>(m));
  }

  void finish_step(int r, int m) {
    MicroBatch& mb = replicas_[r].micro_batches[m];
    account(r);
    mb.scheduler->complete(mb.step, outcome_);
    const double now = engine_.now();
    for (const int request : outcome_.first_tokens) result_.requests[request].first_token_s = now;
    for (const int request : outcome_.finished) {
      if (r < prefill_replicas_ && requests_[request].output_tokens > 1) {
        hand_over(r, request);
      } else {
        result_.requests[request].finish_s = now;
      }
    }
    mb.busy = false;
    start_step(r, m);
  }

  // A re-split's transfer starts once replica r's micro-batches in flight have finished: for each
  // pair of stages, the weights of the layers moving between them and those layers' share of the
  // blocks in use, sent by every tensor-parallel rank at once; the pairs move at once too, as
  // flows sharing the links with each other and with every other transfer in flight (other
  // replicas' re-splits, KV caches).
  void move_layers_once_drained(int r) {
    Replica& rep = replicas_[r];
    if (rep.resplit != Replica::Resplit::kDraining || !rep.drained()) return;
    rep.resplit = Replica::Resplit::kMoving;
    Reconfiguration& rc = rep.reconfiguration;
    rc.replica = r;
    rc.from_layers = rep.cost->split();
    rc.to_layers = options_.resplit_layers;
    rc.drained_s = engine_.now();
    rc.kv_blocks = rep.used_blocks();
    const int tp = options_.tp;
    const double weights = layer_weight_bytes(model_, options_.dtype, tp);
    const double kv = static_cast<double>(rc.kv_blocks) * options_.block_tokens *
                      kv_bytes_per_token_per_layer(model_, options_.dtype, tp);
    std::map<std::pair<int, int>, int> moves;  // (from stage, to stage) -> layers
    for (int layer = 0; layer < model_.num_layers; ++layer) {
      const int from = stage_of(rc.from_layers, layer), to = stage_of(rc.to_layers, layer);
      if (from != to) ++moves[{from, to}];
    }
    const std::vector<GpuId>& gpus = result_.replicas[r].gpus;
    pieces_.clear();
    for (const auto& [stages, layers] : moves) {
      for (int rank = 0; rank < tp; ++rank)
        pieces_.push_back({gpus[stages.first * tp + rank], gpus[stages.second * tp + rank], layers * (weights + kv)});
      rc.layers_moved += layers;
      rc.weights_bytes += layers * weights * tp;
      rc.kv_bytes += layers * kv * tp;
    }
    if (pieces_.empty()) {
      engine_.schedule(0, id_, kNothingToMove, static_cast<std::uint64_t>(r));
    } else {
      transfers_->start(resplit_tag(r), pieces_);
    }
  }

  // The layers have arrived: the replica runs the new split, its cache resized to it.
  void layers_arrived(int r) {
    Replica& rep = replicas_[r];
    account(r);
    rep.reconfiguration.transfer_s = engine_.now() - rep.reconfiguration.drained_s;
    if (observer_ != nullptr) observer_->reconfiguration(rep.reconfiguration);
    rep.cost->set_split(options_.resplit_layers);
    rep.stage_kv_bytes_per_token = rep.resplit_kv_bytes_per_token;
    ReplicaStats& stats = result_.replicas[r];
    stats.stage_layers = options_.resplit_layers;
    // Figures over the whole run count the smaller of the two caches.
    stats.kv_blocks = std::min(stats.kv_blocks, rep.resplit_blocks);
    const long share = rep.resplit_blocks / static_cast<long>(rep.micro_batches.size());
    for (MicroBatch& mb : rep.micro_batches) mb.scheduler->resize_cache(share);
    rep.resplit = Replica::Resplit::kDone;
    result_.reconfigurations.push_back(rep.reconfiguration);
    for (std::size_t m = 0; m < rep.micro_batches.size(); ++m) start_step(r, static_cast<int>(m));
  }

  Engine engine_;
  std::uint32_t id_ = 0;
  const Cluster& cluster_;
  const TransformerConfig& model_;
  const std::vector<Request>& requests_;
  std::vector<Replica>& replicas_;
  ServingResult& result_;
  const ServingOptions& options_;
  Router router_;         // to the replicas that prefill (all of them, unless disaggregated)
  Router decode_router_;  // disaggregated: to the decode replicas
  ServingObserver* observer_;
  int prefill_replicas_;
  std::vector<int> outstanding_;
  StepOutcome outcome_;
  std::vector<double> stage_start_, stage_s_;
  std::vector<TransferPiece> pieces_;
  // The links that KV caches and re-splits cross (null when the run has neither).
  std::unique_ptr<RouteTransfers> transfers_;
};

}  // namespace

ServingResult simulate_serving(const Cluster& cluster, const GpuCatalog& catalog,
                               const TransformerConfig& model, const std::vector<Request>& requests,
                               const ServingOptions& options, ServingObserver* observer) {
  if (requests.empty()) throw PlanError("serve: no requests to serve");
  if (options.tp < 1 || options.pp < 1)
    throw PlanError(fmt::format("serve: tp {} and pp {} must be at least 1", options.tp, options.pp));
  if (options.block_tokens < 1 || options.max_num_seqs < 1)
    throw PlanError("serve: --block-tokens and --max-num-seqs must be at least 1");
  if (!(options.gpu_memory_utilization > 0 && options.gpu_memory_utilization <= 1))
    throw PlanError(fmt::format("serve: --gpu-memory-utilization {} must be in (0, 1]",
                                options.gpu_memory_utilization));
  const int per_replica = options.tp * options.pp;
  const int fit = cluster.gpu_count() / per_replica;
  if (options.replicas < 0) throw PlanError(fmt::format("serve: --replicas {} must be 0 (all) or more", options.replicas));
  const int replicas = options.replicas > 0 ? options.replicas : fit;
  if (replicas < 1 || replicas > fit)
    throw PlanError(fmt::format("serve: {} replicas of tp {} x pp {} need {} GPUs; cluster {} has {}",
                                std::max(replicas, 1), options.tp, options.pp, std::max(replicas, 1) * per_replica,
                                cluster.name(), cluster.gpu_count()));
  if (options.prefill_replicas < 0 || (options.prefill_replicas > 0 && options.prefill_replicas >= replicas))
    throw PlanError(fmt::format("serve: --prefill-replicas {} must leave at least one of the {} replicas to decode",
                                options.prefill_replicas, replicas));
  if (options.resplit_at_s >= 0 && options.pp < 2)
    throw PlanError(fmt::format("serve: --resplit-at needs a pipeline of 2 or more stages (--pp {})", options.pp));
  if (options.draft_model != nullptr) {
    if (options.spec_tokens < 1)
      throw PlanError(fmt::format("serve: --spec-tokens {} must be at least 1 with a draft model", options.spec_tokens));
    if (!(options.acceptance_rate >= 0 && options.acceptance_rate <= 1))
      throw PlanError(fmt::format("serve: --acceptance-rate {} must be in [0, 1]", options.acceptance_rate));
    if (options.draft_model->vocab_size != model.vocab_size)
      throw PlanError(fmt::format("serve: draft model {} has a vocabulary of {} tokens, target {} one of {}; "
                                  "the draft must share the target's tokenizer",
                                  options.draft_model->name, options.draft_model->vocab_size, model.name,
                                  model.vocab_size));
  }
  long longest = 0;
  for (const Request& r : requests) longest = std::max<long>(longest, r.prompt_tokens + r.output_tokens - 1L);

  ServingResult result;
  result.prefill_replicas = options.prefill_replicas;
  // The workload generator starts from the same seed; offsetting it by 2^64 / golden ratio (the
  // increment of Steele et al.'s SplitMix64) keeps the acceptance draws off the stream of
  // arrival gaps and token counts.
  std::mt19937_64 acceptance_rng(options.speculative_seed + 0x9e3779b97f4a7c15ULL);
  SpeculativeDecoding speculation;
  if (options.draft_model != nullptr) {
    speculation = {options.spec_tokens, options.acceptance_rate, &acceptance_rng};
    result.spec_tokens = options.spec_tokens;
    result.acceptance_rate = options.acceptance_rate;
    result.draft_model = options.draft_model->name;
  }
  result.max_batched_tokens = options.max_batched_tokens > 0 ? options.max_batched_tokens
                              : options.scheduler == SchedulerKind::kSarathi
                                  ? kSarathiTokenBudget
                                  : std::max(kVllmMinBatchedTokens, longest);
  if (options.scheduler != SchedulerKind::kSarathi && longest > result.max_batched_tokens)
    throw PlanError(fmt::format("serve: a request of {} tokens (prompt + output - 1) exceeds --max-batched-tokens {}; "
                                "{} prefills a prompt whole",
                                longest, result.max_batched_tokens, to_string(options.scheduler)));

  KvCacheLimits kv_limits;
  kv_limits.block_tokens = options.block_tokens;
  kv_limits.gpu_memory_utilization = options.gpu_memory_utilization;
  kv_limits.max_batched_tokens = result.max_batched_tokens;
  kv_limits.max_num_seqs = options.max_num_seqs;

  GpuProfiles profiles(cluster, "");  // each node group's own profile, if it has one
  std::vector<Replica> reps(replicas);
  result.replicas.resize(replicas);
  for (int r = 0; r < replicas; ++r) {
    ReplicaStats& stats = result.replicas[r];
    std::vector<StageHardware> stages(options.pp);
    for (int s = 0; s < options.pp; ++s) {
      const GpuId first = replica_gpu(r, s, 0, options.tp, options.pp);
      std::vector<GpuId> tp_group;
      for (int g = first; g < first + options.tp; ++g) {
        stats.gpus.push_back(g);
        tp_group.push_back(g);
        if (cluster.gpu(g).gpu_type != cluster.gpu(first).gpu_type)
          throw PlanError(fmt::format("serve: replica {} stage {} mixes GPU types {} and {} in one tensor-parallel group",
                                      r, s, cluster.gpu(first).gpu_type, cluster.gpu(g).gpu_type));
      }
      StageHardware& hw = stages[s];
      hw.gpu = &catalog.at(cluster.gpu(first).gpu_type);
      hw.profile = profiles.of(first);
      hw.tp_links = tensor_parallel_links(cluster, tp_group);
      if (s + 1 < options.pp) {
        // Each TP rank sends to the same TP rank of the next stage, all at once (batch_cost.hpp).
        std::vector<std::pair<GpuId, GpuId>> pairs;
        for (int g = 0; g < options.tp; ++g)
          pairs.emplace_back(replica_gpu(r, s, g, options.tp, options.pp),
                             replica_gpu(r, s + 1, g, options.tp, options.pp));
        const RingBottleneck hand_over = pairs_bottleneck(cluster, pairs);
        hw.next_latency_s = hand_over.latency_s;
        hw.next_bandwidth_bytes_per_s = hand_over.bandwidth_bytes_per_s;
      }
      stats.stage_gpu_types.push_back(hw.gpu->key);
    }
    reps[r].cost = std::make_unique<ReplicaCost>(model, options.dtype, options.tp, stages, options.layers_per_stage);
    if (options.draft_model != nullptr)
      reps[r].draft = std::make_unique<ReplicaCost>(*options.draft_model, options.dtype, options.tp,
                                                    std::vector<StageHardware>{stages.front()});
    // Each stage's budget under `split`; the tightest stage's blocks; and the share of one
    // micro-batch (one in flight per stage, each with an equal share of the cache), checked to
    // hold the longest request.
    const auto budgets = [&](const std::vector<int>& split, std::vector<KvCacheBudget>& out) {
      out.clear();
      std::size_t tightest = 0;
      for (int s = 0; s < options.pp; ++s) {
        out.push_back(kv_cache_budget(model, options.dtype, options.tp, split[s], s == 0, s == options.pp - 1,
                                      *stages[s].gpu, kv_limits));
        if (s == 0 && options.draft_model != nullptr)
          out[0] = with_draft_model(out[0],
                                    kv_cache_budget(*options.draft_model, options.dtype, options.tp,
                                                    options.draft_model->num_layers, true, true, *stages[s].gpu,
                                                    kv_limits),
                                    *stages[s].gpu, options.block_tokens);
        if (out[s].blocks < out[tightest].blocks) tightest = static_cast<std::size_t>(s);
      }
      const long blocks = out[tightest].blocks;
      const long share = blocks / options.pp;
      if (blocks_for(longest, options.block_tokens) > share)
        throw PlanError(fmt::format("serve: a request of {} tokens needs {} KV-cache blocks; replica {} holds {} per "
                                    "micro-batch ({} in all, {} micro-batches{})",
                                    longest, blocks_for(longest, options.block_tokens), r, share, blocks, options.pp,
                                    split == reps[r].cost->split() ? "" : fmt::format(", layers {}", fmt::join(split, ","))));
      return tightest;
    };
    std::vector<KvCacheBudget> stage_budgets;
    const std::size_t tightest = budgets(reps[r].cost->split(), stage_budgets);
    for (const KvCacheBudget& b : stage_budgets) reps[r].stage_kv_bytes_per_token.push_back(b.kv_bytes_per_token);
    stats.stage_layers = reps[r].cost->split();
    stats.tightest_stage = stage_budgets[tightest];
    stats.kv_blocks = stage_budgets[tightest].blocks;
    stats.stage_busy_s.assign(options.pp, 0);
    const long share = stats.kv_blocks / options.pp;
    if (options.resplit_at_s >= 0) {
      check_layer_split(model, options.pp, options.resplit_layers);
      std::vector<KvCacheBudget> after;
      reps[r].resplit_blocks = after[budgets(options.resplit_layers, after)].blocks;
      for (const KvCacheBudget& b : after) reps[r].resplit_kv_bytes_per_token.push_back(b.kv_bytes_per_token);
    }
    SchedulerLimits limits;
    limits.max_num_seqs = options.max_num_seqs;
    limits.max_batched_tokens = result.max_batched_tokens;
    limits.block_tokens = options.block_tokens;
    limits.num_blocks = share;
    reps[r].micro_batches.resize(options.pp);
    for (MicroBatch& mb : reps[r].micro_batches) mb.scheduler = std::make_unique<ReplicaScheduler>(options.scheduler, limits, speculation);
    reps[r].stage_free_s.assign(options.pp, 0);
  }

  result.requests.resize(requests.size());
  ServingReplay replay(cluster, model, requests, reps, result, options, observer);
  replay.start();

  double last = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const RequestOutcome& out = result.requests[i];
    if (out.first_token_s < 0 || out.finish_s < 0)
      throw SimulationError(fmt::format("serve: request {} did not finish (arrived {} s)", i, out.arrival_s));
    last = std::max(last, out.finish_s);
  }
  for (int r = 0; r < replicas; ++r) {
    for (const MicroBatch& mb : reps[r].micro_batches) {
      result.replicas[r].preemptions += mb.scheduler->preemptions();
      result.replicas[r].speculation.add(mb.scheduler->speculation_stats());
    }
    if (reps[r].used_blocks() != 0 || reps[r].outstanding() != 0)
      throw SimulationError(fmt::format("serve: replica {} ended holding {} blocks and {} requests", r,
                                        reps[r].used_blocks(), reps[r].outstanding()));
  }
  result.makespan_s = last - requests.front().arrival_s;
  return result;
}

}  // namespace hetsim::serving

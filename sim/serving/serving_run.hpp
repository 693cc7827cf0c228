#pragma once
// A serving run: requests arriving over time, routed to replicas of tp x pp GPUs on a cluster,
// each replica scheduling iterations (replica_scheduler.hpp) costed op by op (batch_cost.hpp),
// replayed as events on the engine (sim/engine.hpp). Replica r takes the GPUs r*tp*pp up to
// (r+1)*tp*pp - 1 in cluster order, stage s of it the s-th group of tp; each stage runs on its
// own GPU type, so a replica may span node types and sites. A replica of pp stages keeps pp
// micro-batches in flight, as vLLM's pipeline parallelism does (one virtual engine per stage,
// each scheduling its own requests in an equal share of the KV cache): while one micro-batch
// runs on stage s, another may run on stage s + 1, and an iteration waits for a busy stage.
#include <cstdint>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/serving/batch_cost.hpp"
#include "sim/serving/kv_cache.hpp"
#include "sim/serving/replica_scheduler.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/workload.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::serving {

// The GPU of tensor-parallel rank `rank` in stage `stage` of replica `replica` (see above).
inline GpuId replica_gpu(int replica, int stage, int rank, int tp, int pp) {
  return replica * tp * pp + stage * tp + rank;
}

struct ServingOptions {
  int tp = 1;
  int pp = 1;
  int replicas = 0;  // 0: as many as the cluster's GPUs hold
  // Disaggregated serving (DistServe, Splitwise): the first `prefill_replicas` replicas only
  // prefill; each request's KV cache then goes over the cluster routes to one of the others,
  // sharing the links with the other transfers in flight, and is decoded there once it has fully
  // arrived. 0: every replica does both.
  int prefill_replicas = 0;
  Dtype dtype = Dtype::kBf16;
  SchedulerKind scheduler = SchedulerKind::kVllm;
  RouterKind router = RouterKind::kRoundRobin;
  int max_num_seqs = 256;
  long max_batched_tokens = 0;  // 0: vllm/orca the longest request (at least 2048), sarathi 512
  int block_tokens = 16;
  double gpu_memory_utilization = 0.9;
  // Layers of each stage (one count per stage, summing to the model's layers); empty: even.
  std::vector<int> layers_per_stage;
  // Speculative decoding with a draft model (null: off). The draft runs on the first stage's
  // GPUs with the target's tensor parallelism before the target's pass, as vLLM's draft-model
  // proposer runs on the target's workers; its weights and KV cache share the first stage's
  // memory. The acceptance draws come from their own generator, seeded from
  // `speculative_seed` (`hetsim serve` passes --seed).
  const TransformerConfig* draft_model = nullptr;
  int spec_tokens = 0;
  double acceptance_rate = 0;
  std::uint64_t speculative_seed = 1;
  // Re-splitting every replica's stages at run time (resplit_at_s >= 0): at that time a replica
  // starts no new iteration, lets the micro-batches in flight finish, then moves the layers that
  // change stage (their weights and their KV-cache blocks) to their new stages' GPUs and resumes
  // with `resplit_layers`.
  double resplit_at_s = -1;
  std::vector<int> resplit_layers;
};

// Sarathi-Serve's token budget in its evaluation (Agrawal et al., OSDI'24, section 5) and vLLM's
// floor for max_num_batched_tokens without chunked prefill (vllm/config.py, SchedulerConfig).
inline constexpr long kSarathiTokenBudget = 512;
inline constexpr long kVllmMinBatchedTokens = 2048;

// What happened to one request (times in seconds of simulated time).
struct RequestOutcome {
  double arrival_s = 0;
  double first_token_s = 0;
  double finish_s = 0;
  int prompt_tokens = 0;
  int output_tokens = 0;
  int replica = 0;           // the replica that emitted its last token
  int prefill_replica = -1;  // disaggregated serving: the replica that prefilled it
};

struct ReplicaStats {
  std::vector<GpuId> gpus;           // tp * pp, stage by stage
  std::vector<std::string> stage_gpu_types;
  std::vector<int> stage_layers;
  KvCacheBudget tightest_stage;      // the stage with the fewest blocks
  long kv_blocks = 0;
  long peak_blocks_used = 0;
  double block_seconds = 0;          // integral of blocks in use over time
  double busy_s = 0;                 // iterations' latencies summed (micro-batches may overlap)
  std::vector<double> stage_busy_s;  // per stage: time its GPUs computed
  long iterations = 0;
  long preemptions = 0;
  long requests = 0;
  SpeculationStats speculation;
  double draft_busy_s = 0;           // speculative decoding: the draft's passes (on stage 0)
};

// A replica's re-split. Each GPU of a stage losing layers sends its shard of their weights and
// of the KV-cache blocks in use to the GPU of the same tensor-parallel rank in the stage gaining
// them, every pair at once over its cluster route, as flows sharing the links with each other and
// with every other transfer in flight (route_transfers.hpp): alone on its route, a pair takes the
// route's latency plus its bytes over the route's bottleneck bandwidth.
struct Reconfiguration {
  int replica = 0;
  std::vector<int> from_layers, to_layers;  // per stage
  double requested_s = 0;   // the replica stopped starting iterations
  double drained_s = 0;     // its micro-batches in flight had finished; the transfer starts
  double transfer_s = 0;    // until the moves' last byte arrived; the replica resumes then
  int layers_moved = 0;
  long kv_blocks = 0;       // blocks in use, whose moved layers' keys and values go along
  double weights_bytes = 0;  // over every GPU
  double kv_bytes = 0;
  double pause_s() const { return drained_s + transfer_s - requested_s; }
};

struct ServingResult {
  std::vector<RequestOutcome> requests;  // in workload order
  std::vector<ReplicaStats> replicas;
  double makespan_s = 0;                 // first arrival to last finish
  long max_batched_tokens = 0;
  long events = 0;
  int prefill_replicas = 0;
  double kv_transfer_bytes = 0;       // disaggregated serving: KV caches sent to decode replicas
  double kv_transfer_egress_usd = 0;  // their price on the links they crossed (WAN egress)
  int spec_tokens = 0;                // speculative decoding: draft tokens per step (0: off)
  double acceptance_rate = 0;
  std::string draft_model;            // its name
  std::vector<Reconfiguration> reconfigurations;  // by replica, in the order they resumed
};

// Subscribes to what the replay reports (the trace writer does).
class ServingObserver {
 public:
  virtual ~ServingObserver() = default;
  // An iteration of `replica` starting at `start_s`: stage s computes from stage_start_s[s] for
  // stage_s[s] seconds (stage 0's time includes the speculative draft's passes, if any).
  virtual void iteration(int replica, const std::vector<double>& stage_start_s,
                         const std::vector<double>& stage_s, const Step& step) = 0;
  // A replica's re-split transfer, from r.drained_s for r.transfer_s (told once it has arrived).
  virtual void reconfiguration(const Reconfiguration& r) = 0;
};

// Throws PlanError when the options do not fit the cluster or the model (too few GPUs, no room
// for the KV cache, a request longer than a replica's cache or its batched-token limit).
ServingResult simulate_serving(const Cluster& cluster, const GpuCatalog& catalog,
                               const TransformerConfig& model, const std::vector<Request>& requests,
                               const ServingOptions& options, ServingObserver* observer = nullptr);

}  // namespace hetsim::serving

#pragma once
// The space `hetsim plan` searches: which GPUs of the cluster to use, and on them every
// Megatron-style plan that the model and the global batch allow (tp, context parallelism on long
// sequences, pp, vpp, micro-batch size, schedule, recomputation, ZeRO stage, activation
// offload). A candidate is a sweep point: its keys are those of `hetsim run`'s flags
// (tools/sweep/point_job.hpp), so it runs exactly as `run` would run it.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim::plan {

// The bound on --max-vpp: more virtual stages than any model's layers per rank would allow.
inline constexpr int kMaxVirtualStages = 1024;

struct PlanSpaceOptions {
  std::string cluster_file;
  std::string model_file;
  int global_batch_size = 0;
  int seq_length = 0;
  // Widen the space beyond what practitioners usually run: GPipe and ZB-H2 schedules, ZeRO 2
  // and 3, micro-batches of 8, PipeOffload of half or all activations.
  bool wide = false;
  // The most virtual stages per rank the interleaved schedule tries: every v from 2 to this
  // that divides the layers per rank (GPT-3 175B on pp 16 runs best at v = 6, one layer a chunk).
  int max_vpp = 8;
};

// The GPUs one candidate uses: the cluster less the node groups ("site/group") it leaves out.
struct GpuSubset {
  std::vector<std::string> left_out;  // empty: every GPU
  std::string left_out_text;          // "dc-c/rtx4090 (16 x rtx-4090)", or "" for none
  int gpus = 0;
  int min_gpus_per_node = 0;           // tp stays inside a node
  std::vector<std::string> gpu_types;  // distinct catalog keys used
  double usd_per_hour = 0;             // list price of the GPUs used
  bool measured_profiles = false;      // some group used is costed by a calibration profile
  int sites = 0;                       // sites with GPUs used
};

// Every GPU subset worth trying: all GPUs, and (when the cluster has more than one node group)
// every non-empty union of node groups for up to kMaxSubsetGroups groups, otherwise each
// single group left out. Subsets whose WAN links do not join their sites are skipped. A cluster
// with measured pair links is tried whole only (its links are indexed by node).
inline constexpr std::size_t kMaxSubsetGroups = 4;
std::vector<GpuSubset> gpu_subsets(const ClusterSpec& spec, const GpuCatalog& catalog);

struct PlanCandidate {
  std::size_t subset = 0;  // index into the subsets
  int tp = 1;
  int cp = 1;  // context parallelism: each sequence split over cp GPUs
  int pp = 1;
  int dp = 1;  // GPUs / (tp cp pp)
  int ep = 1;  // expert parallelism (MoE models): ep consecutive data-parallel replicas share the experts
  int vpp = 1;
  int mbs = 1;
  std::string schedule;
  std::string recompute;  // none, selective, full
  int zero_stage = 0;
  double offload_fraction = 0;
  // Layers per stage from the heterogeneous partitioner (--balance-layers), tried where the
  // subset mixes GPU types; otherwise the even split.
  bool balance_layers = false;
  std::string placement = "megatron";  // or site-aware, tried on three sites or more
  int microbatches(int gbs) const { return gbs / (mbs * dp); }
  // The sweep point (keys of point_job.hpp) on `subset` that runs this candidate.
  nlohmann::json point(const PlanSpaceOptions& options, const GpuSubset& subset) const;
  // "tp4 pp2 dp4 vpp1 mbs1 1f1b recompute=none zero1" ("tp4 cp2 pp2 ..." when cp > 1).
  std::string text() const;
};

// Sequences of at least this many tokens also try context parallelism 2 and 4. A ring step's
// attention (s/cp queries against s/cp keys) shrinks with the square of the block, its K,V
// transfer linearly, so short sequences expose the ring: README's what-if (Llama-3-8B, 32 H100)
// has cp 4 expose 0.07 s and lose to cp 1 at 4k tokens and cp 2 gain 2%, while at 32k both hide
// the ring and gain 9% and 13%. Below the threshold cp would mostly add candidates to simulate
// that lose or barely win, and the searches of 4k-8k tokens keep their space.
inline constexpr int kContextParallelMinSeqLength = 16384;

// Every candidate on every subset, in a fixed order: tp divides the attention and KV heads and
// fits in a node; cp in {1, 2, 4} from kContextParallelMinSeqLength tokens on (tp cp dividing a
// node's GPUs so that the ring stays in the node, seq divisible by 2 cp for causal load
// balancing, models that attend to the whole sequence, megatron placement only); pp divides the
// layers and pp = 1 runs no schedule choice; dp = GPUs / (tp cp pp)
// divides the global batch by the micro-batch; vpp (interleaved only) is every v in
// [2, max_vpp] dividing the layers per rank;
// interleaved needs Megatron's microbatch rule (m multiple of pp); zb-h2 needs m >= 2 pp.
// Balanced layers (one chunk per rank: 1f1b, zb-h1, gpipe, zb-h2) where GPU types mix, and the
// site-aware placement on three sites or more.
std::vector<PlanCandidate> enumerate_candidates(const TransformerConfig& model,
                                                const std::vector<GpuSubset>& subsets,
                                                const PlanSpaceOptions& options);

}  // namespace hetsim::plan

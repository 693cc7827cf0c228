#pragma once
// One training iteration of a model on a cluster with a parallel plan and a pipeline schedule:
// checks the plan against the cluster and model, places workers (placement.hpp), costs every
// chunk on its own GPU type, replays the timetable on the network and gathers what the report
// shows. Throws PlanError for a plan that does not fit, ScheduleError for an unrunnable
// timetable, SimulationError when the replay cannot finish.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/op_cost.hpp"
#include "models/parallel_plan.hpp"
#include "models/transformer_config.hpp"
#include "schedules/timetable.hpp"
#include "sim/placement.hpp"
#include "sim/replay_observer.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

struct RunOptions {
  ParallelPlan plan;                    // dp is derived from the cluster; the field is ignored
  std::string schedule = "1f1b";        // timetable generator kind
  std::optional<Timetable> timetable;   // replaces the generator when set
  std::string timetable_file;           // where `timetable` came from, named in its errors
  int sequence_splits = 1;              // Seq1F1B's k (--seq-splits)
  // Geo-distributed training: activations and gradients crossing a WAN link are compressed by
  // this ratio at the sender (--wan-compression), and data-parallel replicas synchronise every
  // `sync_every` steps, DiLoCo-style (--sync-every): the reported iteration is the average over
  // those steps, carrying 1/H of a gradient reduction.
  double wan_compression = 1;
  int sync_every = 1;
  // Data-parallel gradient reduction (sim/data_parallel_sync.hpp): --overlap-grad-reduce launches
  // each bucket during the last microbatch's backward; --ddp-bucket-size in parameters (0:
  // Megatron's default); alpha_beta_collectives costs the collectives by closed forms instead of
  // simulating their flows (--collectives alpha-beta).
  bool overlap_grad_reduce = false;
  // --overlap-param-gather (distributed optimizer, with --overlap-grad-reduce, as Megatron
  // requires): the updated parameters are gathered during the next iteration's forward, each
  // chunk's before its first forward, instead of after the optimizer step.
  bool overlap_param_gather = false;
  // --overlap-p2p-comm: pipeline sends leave without the sender waiting for them. Without it the
  // Megatron-LM schedules (1f1b, interleaved) wait for each op's batch of sends and receives
  // (sim/pipeline_replay.hpp, P2pSync); the other schedules' runtimes never wait for a send.
  bool overlap_p2p_comm = false;
  // --no-overlap-p2p-communication: the interleaved schedule batches each op's sends and
  // receives and waits for them (P2pSync::kBatched), as Megatron-LM did until October 2023.
  // Without it interleaved sends overlap compute: Megatron-LM's default since commit 4eeff55d
  // ("Make overlap_p2p_comm the default", arguments.py's --no-overlap-p2p-communication,
  // store_false), which applies to the interleaved schedule only (1F1B keeps waiting).
  bool no_overlap_p2p_comm = false;
  // --blocking-p2p: the pipeline runtime queues a stage's sends and receives on one stream in
  // program order, so its next receive (and the op that needs it) waits until its previous
  // sends have completed: DS3Lab's GpipeAsync (Decentralized_FM_alpha, one NCCL stream for
  // send and recv) and DeepSpeed's PipelineEngine (its instructions run one after another).
  // Any schedule; Megatron-LM's own waits (above) are kept where they are stricter.
  bool blocking_p2p = false;
  // --nccl-sockets: TCP connections NCCL's socket transport opens per peer connection
  // (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD; NCCL picks 2 x 8 on AWS, 1 x 1 elsewhere).
  // Where a route has a round trip (WAN and measured pair links, which only sockets cross), one
  // connection keeps at most this many TCP windows in flight (sim/transport_window.hpp).
  int nccl_sockets = 1;
  double ddp_bucket_params = 0;
  // --placement site-aware: order the sites so that pipeline boundaries cross the fastest WAN
  // links (sim/site_placement.hpp); otherwise Megatron's rank order over the cluster file's GPUs.
  bool site_placement = false;
  bool alpha_beta_collectives = false;
  // A calibration profile for every GPU whose node group names none (--profile); empty: none.
  std::string profile_path;
  // zb-auto's activation limit per rank, in microbatches of one stage (0: what the GPUs' memory
  // holds beside static memory, at most 2p - 1, ZB-H2's).
  int memory_limit_microbatches = 0;
  double offload_fraction = 0;          // PipeOffload: share of activations sent to host memory
  int first_stage_layers = 0;           // --decoder-first-pipeline-num-layers (0 = even split)
  int last_stage_layers = 0;            // --decoder-last-pipeline-num-layers
  // Layers of each model slice (--layers-per-stage): one entry >= 1 per virtual stage along a
  // microbatch's path (pp x vpp, or pp along each of DualPipe's paths), adding up to the model's
  // layers. Empty: the even split, or the first/last options above.
  std::vector<int> layers_per_stage;
  // --balance-layers: choose layers_per_stage with the heterogeneous partitioner
  // (schedules/partitioner.hpp) from each stage's own GPU type, measured profile and links, as
  // the replay costs its ops: time per layer = F + B + W (+ recompute) of a one-layer chunk, the
  // embedding and LM head on top on the first and last stage; memory = static memory + one
  // layer's activations x the microbatches the timetable keeps in flight on that rank
  // (peak_activations: released at B, or at W when the timetable splits the backward; p - rank
  // for 1F1B), within the GPU's memory. Where a rank's replicas differ (GPU type, profile,
  // NVLink) the slowest time and smallest memory count. One chunk per rank and timetables
  // without paths only (not interleaved, V-shaped or DualPipe placements).
  bool balance_layers = false;
};

struct GpuMemory {
  GpuId gpu = 0;
  std::string gpu_type;
  double static_bytes = 0;       // weights, gradients, optimizer state
  double activation_bytes = 0;   // peak activations
  double capacity_bytes = 0;
  double peak_bytes() const { return static_bytes + activation_bytes; }
};

// Traffic over one wide-area link (one direction) per iteration.
struct WanLinkTraffic {
  std::string link;  // "site-a->site-b"
  double bytes = 0;
  double egress_usd = 0;
};

struct RunResult {
  ParallelPlan plan;                     // with dp filled in
  std::string schedule;
  int zb_auto_memory_limit = 0;          // zb-auto's activation limit (microbatches); 0: not zb-auto
  double offload_fraction = 0;
  double wan_compression = 1;
  int sync_every = 1;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  bool alpha_beta_collectives = false;
  std::vector<std::string> site_order;   // --placement site-aware: sites from pipeline rank 0 on
  std::vector<int> layers_per_stage;     // per model slice (virtual stage along a path)
  double iteration_time_s = 0;
  double pipeline_time_s = 0;            // flush of the last pipeline op
  double tokens_per_iteration = 0;
  double tokens_per_s = 0;
  double model_flops = 0;                // per iteration (no recompute)
  double mfu = 0;
  // Idle share of each pipeline rank's compute stream over the pipeline time (Megatron/GPipe
  // definition), averaged over data-parallel replicas; bubble_fraction averages all ranks.
  double bubble_fraction = 0;
  std::vector<double> bubble_fraction_per_rank;
  // Per pipeline rank: how long its data-parallel collectives ran, and the part of it the
  // backward did not hide (from the rank's last op until they are reduced; waiting for other ranks
  // before the optimizer step is not counted).
  std::vector<double> gradient_reduce_s_per_rank;
  std::vector<double> gradient_reduce_exposed_s_per_rank;
  // Per pipeline rank: how long the weight all-gathers that ops wait for ran (ZeRO-3's before
  // every forward and backward, or --overlap-param-gather's before each chunk's first forward),
  // on their own stream; an op they hold back shows as pipeline idle time.
  std::vector<double> parameter_gather_s_per_rank;
  // The all-reduce of tied word-embedding gradients between the embedding's and the LM head's
  // pipeline ranks (after their data-parallel reductions, so part of their exposed time above);
  // ranks -1 when the plan has none.
  int tied_embedding_ranks[2] = {-1, -1};
  double tied_embedding_reduce_s = 0;
  double tied_embedding_bytes_per_gpu = 0;
  // DualPipe's two parameter copies: the pairs of pipeline ranks holding the same slices, whose
  // gradients are all-reduced with each other before the step; the longest of those all-reduces
  // and the most bytes one GPU sends into one.
  std::vector<std::array<int, 2>> mirrored_copy_ranks;
  double mirrored_copy_reduce_s = 0;
  double mirrored_copy_bytes_per_gpu = 0;
  // Context parallelism (cp > 1), per pipeline rank: the ring transfer time per iteration no
  // attention step hid on one GPU (in its ops' times already), and over all GPUs the bytes sent
  // round the rings per iteration (also counted in the link-class bytes below).
  std::vector<double> context_parallel_exposed_s_per_rank;
  double context_parallel_bytes = 0;
  std::vector<GpuMemory> memory;         // per GPU
  double peak_memory_bytes = 0;          // max over GPUs
  std::vector<GpuMemory> oom;            // GPUs whose peak exceeds their HBM
  double gpu_usd = 0;                    // per iteration
  double egress_usd = 0;                 // per iteration, WAN egress
  double cost_usd = 0;                   // gpu_usd + egress_usd
  double cost_usd_per_million_tokens = 0;
  double energy_kwh = 0;                 // per iteration
  // Point-to-point bytes by link class, per iteration: pipeline sends and context-parallel rings.
  double bytes_intra_node = 0;
  double bytes_nic = 0;
  double bytes_wan = 0;
  std::vector<WanLinkTraffic> wan_links;  // the WAN links that carried bytes, in link order
  // Where op costs came from (measured profile or roofline), counted over the distinct chunks
  // costed, and the profiles used.
  CostSources cost_sources;
  std::vector<std::string> profiles;
  double offloaded_bytes = 0;            // activation bytes sent to host memory, per iteration
  std::uint64_t events = 0;
  std::uint64_t transfers = 0;
};

// Checks the plan and builds the placement (tp * pp * dp == GPUs, batch divisibility...).
Placement place_plan(const Cluster& cluster, const TransformerConfig& model, ParallelPlan& plan);

// The placement simulate_training uses for `options`: Megatron's order, or with
// options.site_placement the site-aware one (filling `site_order` with the sites' names from
// pipeline rank 0 on). Checks the plan and fills plan.dp as place_plan does.
Placement place_run(const Cluster& cluster, const GpuCatalog& catalog, const TransformerConfig& model,
                    const RunOptions& options, ParallelPlan& plan,
                    std::vector<std::string>* site_order = nullptr);

RunResult simulate_training(const Cluster& cluster, const GpuCatalog& catalog,
                            const TransformerConfig& model, const RunOptions& options,
                            ReplayObserver* observer = nullptr);

}  // namespace hetsim

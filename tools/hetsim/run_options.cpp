// Registration and resolution of `hetsim run`'s job options (shared with `hetsim sweep`).
#include "tools/hetsim/run_options.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "schedules/generators.hpp"
#include "schedules/timetable_json.hpp"
#include "tools/hetsim/shipped_paths.hpp"

namespace hetsim::cli {

namespace {

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  throw Error("--recompute-granularity: got \"" + text + "\"; expected none, selective or full");
}

Fp8Format parse_fp8_format(const std::string& text) {
  if (text.empty()) return Fp8Format::kNone;
  if (text == "e4m3") return Fp8Format::kE4M3;
  if (text == "hybrid") return Fp8Format::kHybrid;
  throw Error("--fp8-format: got \"" + text + "\"; expected e4m3 or hybrid");
}

}  // namespace

RunArgs default_run_args() {
  RunArgs args;
  args.cluster = shipped(kDefaultCluster);
  args.model = shipped(kDefaultModel);
  ParallelPlan& plan = args.options.plan;
  plan.tp = 4;
  plan.pp = 2;
  plan.micro_batch_size = 1;
  plan.global_batch_size = 64;
  plan.seq_length = 8192;
  return args;
}

CLI::Option* add_run_options(CLI::App& cmd, RunArgs& args) {
  ParallelPlan& plan = args.options.plan;
  cmd.add_option("--cluster", args.cluster, "cluster JSON (topologies/README.md)")
      ->capture_default_str();
  cmd.add_option("--model", args.model, "HuggingFace config.json of the model")
      ->capture_default_str();
  cmd.add_option("--tp,--tensor-model-parallel-size", plan.tp, "tensor-parallel size")
      ->capture_default_str();
  cmd.add_option("--cp,--context-parallel-size", plan.cp,
                 "context-parallel size: each sequence split over cp GPUs, attention as a ring "
                 "(seq-length divisible by 2 x cp)")
      ->capture_default_str();
  cmd.add_option("--pp,--pipeline-model-parallel-size", plan.pp, "pipeline-parallel size")
      ->capture_default_str();
  cmd.add_option("--vpp,--num-virtual-stages-per-pipeline-rank", plan.vpp,
                 "model chunks per pipeline rank (interleaving)")
      ->capture_default_str();
  cmd.add_option("--num-layers-per-virtual-pipeline-stage", args.layers_per_virtual_stage,
                 "Megatron-LM's way to set vpp: layers per model chunk");
  cmd.add_option("--mbs,--micro-batch-size", plan.micro_batch_size, "micro-batch size")
      ->capture_default_str();
  cmd.add_option("--gbs,--global-batch-size", plan.global_batch_size, "global batch size")
      ->capture_default_str();
  cmd.add_option("--seq-length", plan.seq_length, "sequence length (tokens)")
      ->capture_default_str();
  cmd.add_option("--recompute-granularity", args.recompute,
                 "activation recomputation: none, selective or full")
      ->capture_default_str();
  cmd.add_flag("--sequence-parallel", plan.sequence_parallel, "Megatron sequence parallelism");
  cmd.add_flag("--scatter-gather-tensors-in-pipeline", plan.scatter_gather_p2p,
               "without sequence parallelism, each tensor-parallel rank sends 1/tp of a stage's "
               "output and the receiver all-gathers it (Megatron-LM before Megatron-core)");
  cmd.add_flag("--use-flash-attn", plan.flash_attention,
               "FlashAttention: no s^2 attention tensors kept");
  CLI::Option* bf16 = cmd.add_flag("--bf16", args.bf16, "train in bf16 (the default)");
  CLI::Option* fp16 = cmd.add_flag("--fp16", args.fp16,
               "train in fp16 (mixed precision with fp16 weights and activations)")
      ->excludes(bf16);
  CLI::Option* fp32 = cmd.add_flag(
      "--fp32", args.fp32,
      "train in fp32 (Megatron-LM with neither --fp16 nor --bf16): 4-byte weights, gradients and "
      "activations; matmuls in TF32 where the GPU has TF32 tensor cores, as NGC's PyTorch allows "
      "by default");
  fp32->excludes(bf16)->excludes(fp16);
  cmd.add_flag("--no-tf32", args.no_tf32,
               "with --fp32: matmuls in plain fp32 (torch.backends.cuda.matmul.allow_tf32 = False)")
      ->needs(fp32);
  cmd.add_option(
      "--fp8-format", args.fp8_format,
      "FP8 linear layers on top of bf16, Transformer Engine's recipes: e4m3, or hybrid (E4M3 "
      "forward, E5M2 gradients)");
  cmd.add_flag(
      "--accumulate-allreduce-grads-in-fp32", plan.accumulate_allreduce_grads_in_fp32,
      "fp16: accumulate and reduce gradients in fp32 main grads (always so for bf16, as Megatron)");
  cmd.add_flag("--no-async-tensor-model-parallel-allreduce", args.no_async_tp_allreduce,
               "without sequence parallelism, wait for each column-parallel layer's input-gradient "
               "all-reduce after its backward instead of running it beside the wgrad (Megatron-LM "
               "before late 2021)");
  cmd.add_flag("--no-gradient-accumulation-fusion", args.no_gradient_accumulation_fusion,
               "wgrad GEMMs write the weight gradient and a separate kernel adds it into the main "
               "grad every microbatch (Megatron-LM before 2022)");
  cmd.add_flag("--use-distributed-optimizer", plan.distributed_optimizer,
               "shard optimizer state over data-parallel ranks (ZeRO-1)");
  cmd.add_option(
         "--zero-stage", plan.zero_stage,
         "ZeRO stage: 0 none, 1 optimizer state sharded (as --use-distributed-optimizer), 2 also "
         "gradients (reduce-scattered after every microbatch), 3 also weights (all-gathered before "
         "every "
         "forward and backward, as FSDP)")
      ->capture_default_str();
  cmd.add_option("--ep,--expert-model-parallel-size", plan.ep,
                 "expert-parallel size (MoE models): ep consecutive data-parallel replicas share "
                 "the experts and exchange tokens by all-to-all")
      ->capture_default_str();
  cmd.add_option("--decoder-first-pipeline-num-layers", args.options.first_stage_layers,
                 "layers on the first pipeline stage (uneven split)");
  cmd.add_option("--decoder-last-pipeline-num-layers", args.options.last_stage_layers,
                 "layers on the last pipeline stage (uneven split)");
  cmd.add_option("--layers-per-stage", args.options.layers_per_stage,
                 "layers of each pipeline stage (each model slice with vpp > 1), comma-separated, "
                 "adding up to the model's layers, e.g. 6,10,10,6")
      ->delimiter(',');
  cmd.add_flag("--balance-layers", args.options.balance_layers,
               "split the layers so that the slowest stage is as fast as it can be, each stage "
               "costed on its own GPU type and kept within its memory (one chunk per rank)");
  CLI::Option* schedule = cmd.add_option("--schedule", args.options.schedule,
                                         "pipeline schedule kind: " + schedule_kind_list() +
                                             " (interleaved when vpp > 1, as Megatron-LM)")
                              ->capture_default_str();
  cmd.add_option("--offload-fraction", args.options.offload_fraction,
                 "PipeOffload: share of activations copied to host memory between F and B (0..1)")
      ->capture_default_str();
  cmd.add_option("--wan-compression", args.options.wan_compression,
                 "compression ratio of activations and gradients crossing WAN links (>= 1)")
      ->capture_default_str();
  cmd.add_option("--sync-every", args.options.sync_every,
                 "DiLoCo-style local steps: data-parallel replicas synchronise every H steps")
      ->capture_default_str();
  cmd.add_flag("--overlap-grad-reduce", args.options.overlap_grad_reduce,
               "reduce gradients in buckets during the last microbatch's backward (Megatron DDP)");
  cmd.add_flag("--overlap-param-gather", args.options.overlap_param_gather,
               "distributed optimizer: gather updated parameters during the next forward, each "
               "model chunk's "
               "before its first forward, instead of after the optimizer step (Megatron)");
  cmd.add_option("--nccl-sockets", args.options.nccl_sockets,
                 "TCP connections per NCCL socket-transport connection (NCCL_SOCKET_NTHREADS x "
                 "NCCL_NSOCKS_PERTHREAD; NCCL picks 16 on AWS): WAN and pair-link transfers keep "
                 "this many 3 MiB TCP windows in flight per round trip")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  CLI::Option* blocking_p2p = cmd.add_flag("--blocking-p2p", args.options.blocking_p2p,
               "pipeline sends and receives share one stream in program order: a stage's next "
               "receive waits for its previous sends to complete (DS3Lab's GpipeAsync, "
               "DeepSpeed's PipelineEngine); any schedule");
  CLI::Option* overlap_p2p = cmd.add_flag("--overlap-p2p-comm", args.options.overlap_p2p_comm,
               "pipeline sends leave without the sender waiting for them; otherwise 1f1b waits for "
               "each op's sends and receives as Megatron-LM does (interleaved overlaps by default)")
      ->excludes(blocking_p2p);
  cmd.add_flag("--no-overlap-p2p-communication", args.options.no_overlap_p2p_comm,
               "interleaved: batch each op's sends and receives and wait for them, as Megatron-LM "
               "did before October 2023 (its default since then overlaps them)")
      ->excludes(overlap_p2p);
  cmd.add_option("--ddp-bucket-size", args.options.ddp_bucket_params,
                 "parameters per gradient bucket (0: Megatron's max(40M, 1M x dp))")
      ->capture_default_str();
  cmd.add_option(
         "--collectives", args.collectives,
         "data-parallel collectives: flow (simulated as flows on the network) or alpha-beta "
         "(closed forms, no events)")
      ->check(CLI::IsMember({"flow", "alpha-beta"}))
      ->capture_default_str();
  cmd.add_option("--placement", args.placement,
                 "megatron (rank order over the cluster file's GPUs) or site-aware (the site order "
                 "whose WAN links carry the pipeline's traffic fastest)")
      ->check(CLI::IsMember({"megatron", "site-aware"}))
      ->capture_default_str();
  cmd.add_option(
      "--profile", args.options.profile_path,
      "calibration profile (hetsim calibrate) costing every GPU whose node group names none");
  cmd.add_option("--memory-limit", args.options.memory_limit_microbatches,
                 "zb-auto: activations per rank, in microbatches of one stage (0: as many as the GPUs' memory holds, at most 2p-1)")
      ->capture_default_str();
  cmd.add_option("--seq-splits", args.options.sequence_splits,
                 "sequence segments per microbatch (seq1f1b's k)")
      ->capture_default_str();
  cmd.add_option("--timetable", args.timetable,
                 "replay this timetable JSON instead of a generated one");
  return schedule;
}

RunOptions resolve_run_options(const RunArgs& args, const TransformerConfig& model) {
  RunOptions options = args.options;
  options.plan.recompute = parse_recompute(args.recompute);
  options.plan.dtype = args.fp16   ? Dtype::kFp16
                       : args.fp32 ? (args.no_tf32 ? Dtype::kFp32 : Dtype::kTf32)
                                   : Dtype::kBf16;
  options.plan.fp8 = parse_fp8_format(args.fp8_format);
  options.plan.async_tp_allreduce = !args.no_async_tp_allreduce;
  options.plan.gradient_accumulation_fusion = !args.no_gradient_accumulation_fusion;
  options.alpha_beta_collectives = args.collectives == "alpha-beta";
  options.site_placement = args.placement == "site-aware";
  if (args.layers_per_virtual_stage < 0)
    throw PlanError(fmt::format("--num-layers-per-virtual-pipeline-stage {}: expected a layer count >= 1 "
                                "(or 0, the default: no virtual stages)",
                                args.layers_per_virtual_stage));
  if (args.layers_per_virtual_stage > 0 && options.plan.pp >= 1) {
    // Megatron-LM sizes interleaving by layers per virtual stage: vpp = layers / (pp * that).
    if (model.num_layers % options.plan.pp != 0)
      throw PlanError(fmt::format(
          "--num-layers-per-virtual-pipeline-stage {}: the model's {} layers do not divide into "
          "--pp {} pipeline stages; choose a pp dividing {}",
          args.layers_per_virtual_stage, model.num_layers, options.plan.pp, model.num_layers));
    const int per_rank = model.num_layers / options.plan.pp;
    if (per_rank % args.layers_per_virtual_stage != 0)
      throw PlanError(
          fmt::format("--num-layers-per-virtual-pipeline-stage {} does not divide the {} layers "
                      "per pipeline rank",
                      args.layers_per_virtual_stage, per_rank));
    options.plan.vpp = per_rank / args.layers_per_virtual_stage;
  }
  // Megatron-LM runs the interleaved schedule whenever the model is cut into virtual stages.
  if (options.plan.vpp > 1 && !args.schedule_given) options.schedule = "interleaved";
  if (!args.timetable.empty()) {
    options.timetable = load_timetable(args.timetable);
    options.timetable_file = args.timetable;
  }
  return options;
}

std::string schedule_kind_list() {
  std::string list;
  for (const std::string& kind : timetable_kinds()) list += (list.empty() ? "" : ", ") + kind;
  return list;
}

}  // namespace hetsim::cli

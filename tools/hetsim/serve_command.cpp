// `hetsim serve`: LLM inference serving on a cluster, request by request, reported and traced.
#include <fmt/format.h>

#include <charconv>
#include <memory>
#include <optional>

#include "base/error.hpp"
#include "base/report_json.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "sim/serving/serving_report.hpp"
#include "sim/serving/serving_run.hpp"
#include "sim/serving/workload.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"
#include "topologies/cluster_loader.hpp"
#include "traces/serving_trace.hpp"

namespace hetsim::cli {

namespace {

struct ServeArgs {
  std::string cluster = shipped("topologies/clusters/dgx-a100-1node.json");
  std::string model = shipped(kDefaultModel);
  std::string dtype = "bf16";
  std::string scheduler = "vllm";
  std::string router = "round-robin";
  std::string arrival = "poisson";
  std::string prompt_tokens = "512";
  std::string output_tokens = "128";
  std::string requests_csv;
  std::string trace;
  std::string layers_per_stage;
  std::string resplit_at;
  std::string draft_model;
  serving::ServingOptions options;
  serving::SyntheticWorkload workload;
  double slo_ttft_ms = 0;
  double slo_tpot_ms = 0;
  bool json = false;
  bool spec_tokens_given = false;
  bool acceptance_rate_given = false;
};

serving::TokenRange parse_range(const std::string& text, const char* flag) {
  const auto fail = [&]() -> serving::TokenRange {
    throw InputError("command line", flag, text, "token counts MIN[:MAX], integers");
  };
  const std::size_t colon = text.find(':');
  const std::string lo = text.substr(0, colon);
  const std::string hi = colon == std::string::npos ? lo : text.substr(colon + 1);
  serving::TokenRange range;
  for (const auto& [part, out] : {std::pair{&lo, &range.min}, std::pair{&hi, &range.max}}) {
    const auto [end, ec] = std::from_chars(part->data(), part->data() + part->size(), *out);
    if (part->empty() || ec != std::errc() || end != part->data() + part->size()) return fail();
  }
  return range;
}

// "10,14,8": one layer count per stage.
std::vector<int> parse_split(const std::string& text, const char* flag) {
  std::vector<int> layers;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int n = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), n);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || n < 1)
      throw InputError("command line", flag, text, "layers per stage, integers >= 1 separated by commas (e.g. 10,14,8)");
    layers.push_back(n);
    if (comma == std::string::npos) return layers;
    start = comma + 1;
  }
}

void serve(ServeArgs& args) {
  const GpuCatalog shipped = GpuCatalog::load(gpu_catalog_dir());
  const ClusterSpec cluster_spec = load_cluster_spec(args.cluster, shipped.keys());
  const GpuCatalog catalog = catalog_with_cluster_types(shipped, cluster_spec);
  const Cluster cluster = build_cluster(cluster_spec);
  const TransformerConfig model = load_transformer_config(args.model);
  serving::ServingOptions options = args.options;
  options.scheduler = serving::scheduler_from_string(args.scheduler);
  options.router = serving::router_from_string(args.router);
  if (args.dtype != "bf16" && args.dtype != "fp16")
    throw InputError("command line", "--dtype", args.dtype, "bf16 or fp16");
  options.dtype = dtype_from_string(args.dtype);
  if (!args.layers_per_stage.empty()) options.layers_per_stage = parse_split(args.layers_per_stage, "--layers-per-stage");
  if (!args.resplit_at.empty()) {
    const std::size_t colon = args.resplit_at.find(':');
    const std::string when = args.resplit_at.substr(0, colon);
    const auto [end, ec] = std::from_chars(when.data(), when.data() + when.size(), options.resplit_at_s);
    if (colon == std::string::npos || when.empty() || ec != std::errc() || end != when.data() + when.size() ||
        !(options.resplit_at_s >= 0 && options.resplit_at_s <= serving::kMaxServingTimeS))
      throw InputError("command line", "--resplit-at", args.resplit_at,
                       "SECONDS:SPLIT, seconds in [0, 31536000] of simulated time and layers per stage (e.g. 30:10,14,8)");
    options.resplit_layers = parse_split(args.resplit_at.substr(colon + 1), "--resplit-at");
  }
  std::optional<TransformerConfig> draft;
  if (!args.draft_model.empty()) {
    draft = load_transformer_config(args.draft_model);
    options.draft_model = &*draft;
    options.speculative_seed = args.workload.seed;
  } else if (args.spec_tokens_given || args.acceptance_rate_given) {
    throw InputError("command line", args.spec_tokens_given ? "--spec-tokens" : "--acceptance-rate",
                     args.spec_tokens_given ? fmt::format("{}", options.spec_tokens)
                                            : fmt::format("{}", options.acceptance_rate),
                     "speculative decoding needs a draft model (--draft-model)");
  }
  for (const auto& [flag, ms] : {std::pair{"--slo-ttft-ms", args.slo_ttft_ms}, std::pair{"--slo-tpot-ms", args.slo_tpot_ms}})
    if (!(ms >= 0 && ms <= serving::kMaxServingTimeS * 1e3))
      throw InputError("command line", flag, fmt::format("{}", ms),
                       "milliseconds in [0, 3.1536e10] (0: no objective)");

  std::vector<serving::Request> requests;
  std::string workload;
  if (!args.requests_csv.empty()) {
    requests = serving::load_request_trace(args.requests_csv);
    workload = fmt::format("trace {}", args.requests_csv);
  } else {
    serving::SyntheticWorkload w = args.workload;
    if (args.arrival == "poisson") {
      w.process = serving::ArrivalProcess::kPoisson;
    } else if (args.arrival == "gamma") {
      w.process = serving::ArrivalProcess::kGamma;
    } else {
      throw InputError("command line", "--arrival", args.arrival, "poisson or gamma");
    }
    w.prompt = parse_range(args.prompt_tokens, "--prompt-tokens");
    w.output = parse_range(args.output_tokens, "--output-tokens");
    requests = serving::generate_workload(w);
    workload = fmt::format("{} arrivals at {:g} requests/s{}, prompt {} tokens, output {} tokens, seed {}",
                           args.arrival, w.rate_per_s,
                           w.process == serving::ArrivalProcess::kGamma ? fmt::format(" (cv {:g})", w.cv) : "",
                           args.prompt_tokens, args.output_tokens, w.seed);
  }

  std::unique_ptr<ServingTrace> trace;
  if (!args.trace.empty())
    trace = std::make_unique<ServingTrace>(args.trace, cluster, static_cast<int>(requests.size()), options.tp,
                                           options.pp);
  const serving::ServingResult result = serving::simulate_serving(cluster, catalog, model, requests, options, trace.get());
  serving::ServingContext context;
  context.cluster_file = args.cluster;
  context.model_file = args.model;
  context.model_name = model.name;
  context.workload = workload;
  context.scheduler = serving::to_string(options.scheduler);
  context.router = serving::to_string(options.router);
  context.tp = options.tp;
  context.pp = options.pp;
  context.slo = {args.slo_ttft_ms / 1e3, args.slo_tpot_ms / 1e3};
  context.split_given = !options.layers_per_stage.empty();
  const serving::ServingMetrics metrics = serving::serving_metrics(result, cluster, catalog, context.slo);
  // Checked before the trace lands, so a figure that is not finite leaves no output behind.
  const std::string report = dump_report(serving::serving_report_json(result, metrics, context), 2);
  if (trace) trace->commit(result);
  if (args.json)
    fmt::print("{}\n", report);
  else
    fmt::print("{}", serving::serving_report_table(result, metrics, context));
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  args->workload.rate_per_s = 1;
  args->workload.requests = 100;
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve LLM inference requests on replicas of tp x pp GPUs and report TTFT, TPOT and end-to-end "
      "latency percentiles, throughput, goodput under SLOs, KV-cache use, preemptions, cost and energy. "
      "With no options: Llama-3-8B on the 8 A100s of one DGX, 100 Poisson requests at 1/s.\n"
      "Example: hetsim serve --cluster topologies/clusters/dgx-h100-4node.json --tp 2 --scheduler sarathi "
      "--router least-outstanding --rate 20 --requests 2000 --prompt-tokens 256:2048 --output-tokens 16:512 "
      "--slo-ttft-ms 500 --slo-tpot-ms 50 --trace serve.json");
  cmd->add_option("--cluster", args->cluster, "cluster JSON (topologies/clusters/*.json)");
  cmd->add_option("--model", args->model, "model config.json (models/configs/*.json)");
  cmd->add_option("--tp,--tensor-model-parallel-size", args->options.tp, "GPUs per stage");
  cmd->add_option("--pp,--pipeline-model-parallel-size", args->options.pp, "stages per replica");
  cmd->add_option("--replicas", args->options.replicas, "replicas (0: as many as the cluster holds)");
  cmd->add_option("--prefill-replicas", args->options.prefill_replicas,
                  "disaggregated serving: this many replicas only prefill, the others decode (0: all do both)");
  cmd->add_option("--dtype", args->dtype, "bf16 or fp16");
  cmd->add_option("--scheduler", args->scheduler, "vllm, sarathi (chunked prefill) or orca");
  cmd->add_option("--router", args->router, "round-robin or least-outstanding");
  cmd->add_option("--max-num-seqs", args->options.max_num_seqs, "sequences per iteration (vLLM: 256)");
  cmd->add_option("--max-batched-tokens", args->options.max_batched_tokens,
                  "tokens per iteration; Sarathi's token budget (0: vllm/orca the longest request, at least 2048; sarathi 512)");
  cmd->add_option("--block-tokens", args->options.block_tokens, "tokens per KV-cache block (vLLM: 16)");
  cmd->add_option("--gpu-memory-utilization", args->options.gpu_memory_utilization,
                  "share of each GPU's memory for weights, workspace and KV cache (vLLM: 0.9)");
  cmd->add_option("--arrival", args->arrival, "poisson or gamma");
  cmd->add_option("--rate", args->workload.rate_per_s, "mean arrivals per second");
  cmd->add_option("--cv", args->workload.cv, "gamma arrivals: coefficient of variation of the gaps");
  cmd->add_option("--requests", args->workload.requests, "requests to generate");
  cmd->add_option("--prompt-tokens", args->prompt_tokens, "prompt tokens, MIN[:MAX] drawn uniformly");
  cmd->add_option("--output-tokens", args->output_tokens, "output tokens, MIN[:MAX] drawn uniformly");
  cmd->add_option("--seed", args->workload.seed, "random seed of the workload");
  cmd->add_option("--requests-csv", args->requests_csv,
                  "a request trace instead (columns TIMESTAMP, ContextTokens, GeneratedTokens: the Azure LLM inference trace)");
  cmd->add_option("--slo-ttft-ms", args->slo_ttft_ms, "time-to-first-token objective for goodput (0: none)");
  cmd->add_option("--slo-tpot-ms", args->slo_tpot_ms, "time-per-output-token objective for goodput (0: none)");
  cmd->add_option("--layers-per-stage", args->layers_per_stage,
                  "layers of each pipeline stage, e.g. 10,14,8 (one per stage, summing to the model's layers; "
                  "default: even, the remainder to the first stages)");
  cmd->add_option("--resplit-at", args->resplit_at,
                  "SECONDS:SPLIT: at that time every replica drains its micro-batches in flight, moves the layers "
                  "that change stage (weights and KV cache) and continues with SPLIT layers per stage, e.g. 30:10,14,8");
  cmd->add_option("--draft-model", args->draft_model,
                  "speculative decoding: the draft model's config.json (same vocabulary as --model); it runs on "
                  "each replica's first-stage GPUs");
  cmd->add_option("--spec-tokens", args->options.spec_tokens, "speculative decoding: draft tokens per step (K)")
      ->each([args](const std::string&) { args->spec_tokens_given = true; });
  cmd->add_option("--acceptance-rate", args->options.acceptance_rate,
                  "speculative decoding: probability that the target accepts each draft token (alpha), in [0, 1]")
      ->each([args](const std::string&) { args->acceptance_rate_given = true; });
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace to this file");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args] { serve(*args); });
}

}  // namespace hetsim::cli

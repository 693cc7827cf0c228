// `hetsim run`: one training iteration of a model on a cluster, reported and traced.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "base/error.hpp"
#include "base/report_json.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "sim/training_run.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/run_options.hpp"
#include "tools/hetsim/shipped_paths.hpp"
#include "topologies/cluster_loader.hpp"
#include "traces/replay_trace.hpp"
#include "traces/run_report.hpp"

namespace hetsim::cli {

namespace {

// The job flags plus what only `run` does with one job: trace, output format, logging.
struct RunCommandArgs {
  RunArgs job = default_run_args();
  std::string trace;
  bool json = false;
  bool verbose = false;
};

void run(RunCommandArgs& command) {
  const auto wall_start = std::chrono::steady_clock::now();
  const RunArgs& args = command.job;
  // Progress goes to stderr so that --json output on stdout stays machine-readable.
  const auto log = std::make_shared<spdlog::logger>(
      "hetsim run", std::make_shared<spdlog::sinks::stderr_color_sink_st>());
  log->set_level(command.verbose ? spdlog::level::info : spdlog::level::warn);
  const GpuCatalog shipped = GpuCatalog::load(gpu_catalog_dir());
  const ClusterSpec cluster_spec = load_cluster_spec(args.cluster, shipped.keys());
  const GpuCatalog catalog = catalog_with_cluster_types(shipped, cluster_spec);
  log->info("GPU catalog: {} types from {} and {}", catalog.keys().size(), gpu_catalog_dir(), args.cluster);
  const Cluster cluster = build_cluster(cluster_spec);
  log->info("cluster {}: {} GPUs in {} nodes, {} sites, {} links", cluster.name(), cluster.gpu_count(),
            cluster.node_count(), cluster.sites().size(), cluster.links().size());
  const TransformerConfig model = load_transformer_config(args.model);
  log->info("model {}: {} layers, hidden {}, {:.3g}B parameters", model.name, model.num_layers,
            model.hidden_size, model.total_params() / 1e9);
  const RunOptions options = resolve_run_options(args, model);

  // The trace needs the placement before the replay starts; the plan check runs twice, cheaply.
  ParallelPlan placed = options.plan;
  const Placement placement = place_run(cluster, catalog, model, options, placed);
  std::unique_ptr<ReplayTrace> trace;
  if (!command.trace.empty())
    trace = std::make_unique<ReplayTrace>(command.trace, cluster, placement, placed.vpp);
  log->info("plan: tp {}{} x pp {} x dp {}, {} microbatches per replica", placed.tp,
            placed.cp > 1 ? fmt::format(" x cp {}", placed.cp) : "", placed.pp, placed.dp,
            placed.microbatches());
  const RunResult result = simulate_training(cluster, catalog, model, options, trace.get());
  log->info("replayed {} events, {} transfers; layers per stage {}", result.events, result.transfers,
            fmt::join(result.layers_per_stage, ","));
  RunContext context{args.cluster, args.model, model.name, cluster.gpu_count(), 0, command.trace,
                     model.ignored_fields};
  context.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  // Checked in both output modes, and before the trace lands, so a figure that is not finite
  // leaves no output behind; only --json pays for the text of it.
  const nlohmann::json report = run_report_json(result, context);
  const std::string report_text = command.json ? dump_report(report, 2) : run_report_table(result, context);
  if (!command.json) require_finite_report(report);
  if (trace) {
    trace->commit();
    log->info("trace: {} events written to {}", trace->events_written(), command.trace);
  }
  fmt::print("{}{}", report_text, command.json ? "\n" : "");
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunCommandArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Replay one training iteration and report iteration time, tokens/s, MFU, bubbles, peak memory "
      "per GPU, cost and energy. With no options: Llama-3-8B on 4 DGX H100 nodes, tp 4 x pp 2 x dp 4.\n"
      "Example: hetsim run --cluster topologies/clusters/dgx-h100-4node.json --model "
      "models/configs/llama-3-70b.json --tp 8 --pp 4 --mbs 1 --gbs 32 --seq-length 4096 "
      "--recompute-granularity selective --trace run.json");
  CLI::Option* schedule = add_run_options(*cmd, args->job);
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace to this file");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_flag("-v,--verbose", args->verbose, "log each step to stderr");
  cmd->callback([args, schedule] {
    args->job.schedule_given = schedule->count() > 0;
    run(*args);
  });
}

}  // namespace hetsim::cli

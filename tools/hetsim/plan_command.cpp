// `hetsim plan`: search the parallel plans (and the GPUs to use) for a model on a cluster, and
// print the best ones with why each ranks where it does.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"
#include "tools/plan/plan_report.hpp"
#include "tools/plan/plan_search.hpp"

namespace hetsim::cli {

namespace {

// Searches beyond this many candidates times GPUs are announced before they start: the
// README's examples (up to 7,821 candidates on 48 GPUs) stay quiet, `plan --wide` on the
// 16,384 GPUs of a 2,048-node cluster, minutes of simulation, is told.
constexpr double kAnnouncedWork = 1e7;

struct PlanArgs {
  plan::PlanSearchOptions search;
  std::string objective = "time";
  double budget = 0;
  bool budget_given = false;
  int top = 10;
  bool exhaustive = false;
  bool json = false;
};

void run_plan(PlanArgs& args) {
  plan::PlanSearchOptions& search = args.search;
  if (args.budget_given) {
    // nan and 0 used to pass as "no budget".
    if (!(std::isfinite(args.budget) && args.budget > 0))
      throw Error(fmt::format("--budget-usd-per-hour: got {}; expected dollars per hour > 0", args.budget));
    search.budget_usd_per_hour = args.budget;
  }
  if (args.top < 1) throw Error(fmt::format("--top: got {}; expected a count >= 1", args.top));
  if (search.jobs < 0)
    throw Error(
        fmt::format("--jobs: got {}; expected a thread count >= 1 (0: every core)", search.jobs));
  if (search.jobs == 0)
    search.jobs = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  // A space this large can take minutes: its size is told before the search starts.
  search.on_enumerated = [](std::size_t candidates, const std::vector<plan::GpuSubset>& subsets) {
    int most_gpus = 0;
    for (const plan::GpuSubset& subset : subsets) most_gpus = std::max(most_gpus, subset.gpus);
    if (static_cast<double>(candidates) * most_gpus <= kAnnouncedWork) return;
    fmt::print(stderr, "hetsim: note: {} candidates on {} GPU subsets of up to {} GPUs to bound and simulate\n",
               candidates, subsets.size(), most_gpus);
    std::fflush(stderr);
  };
  if (search.space.seq_length < 1)
    throw Error(fmt::format("--seq-length: got {}; expected tokens >= 1", search.space.seq_length));
  search.top = static_cast<std::size_t>(args.top);
  search.objective = args.objective == "cost" ? plan::Objective::kCost : plan::Objective::kTime;
  search.prune = !args.exhaustive;
  const GpuCatalog catalog = GpuCatalog::load(gpu_catalog_dir());
  const plan::PlanSearchResult result = plan::search_plans(catalog, search);
  if (args.json)
    fmt::print("{}\n", plan::plan_json(result, search).dump(2));
  else
    fmt::print("{}", plan::plan_text(result, search));
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  args->search.space.cluster_file = shipped(kDefaultCluster);
  args->search.space.model_file = shipped("models/configs/llama-3-70b.json");
  args->search.space.global_batch_size = 128;
  args->search.space.seq_length = 8192;
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Search tp, pp, dp, vpp, micro-batch, schedule, recomputation, ZeRO stage and which GPUs "
      "to use; prune by closed-form memory and time bounds; simulate the rest; print the top "
      "plans.\n\nExample:\n  hetsim plan --cluster topologies/clusters/three-site.json --model "
      "models/configs/llama-3-8b.json --gbs 64");
  plan::PlanSpaceOptions& space = args->search.space;
  cmd->add_option("--cluster", space.cluster_file, "cluster JSON")->capture_default_str();
  cmd->add_option("--model", space.model_file, "HuggingFace config.json of the model")
      ->capture_default_str();
  cmd->add_option("--gbs,--global-batch-size", space.global_batch_size, "global batch size")
      ->capture_default_str();
  cmd->add_option("--seq-length", space.seq_length, "sequence length (tokens)")
      ->capture_default_str();
  cmd->add_option("--objective", args->objective,
                  "time (iteration time) or cost (dollars per million tokens)")
      ->check(CLI::IsMember({"time", "cost"}))
      ->capture_default_str();
  cmd->add_option("--budget-usd-per-hour", args->budget,
                  "leave out plans whose GPUs cost more per hour (list prices, models/gpus)")
      ->each([args](const std::string&) { args->budget_given = true; });
  cmd->add_option("--top", args->top, "plans to show")->capture_default_str();
  cmd->add_option("--jobs,-j", args->search.jobs, "threads simulating (0: every core)")
      ->capture_default_str();
  cmd->add_option("--max-vpp", space.max_vpp,
                  "most virtual stages per rank the interleaved schedule tries (every v from 2 that "
                  "divides the layers per rank)")
      ->capture_default_str();
  cmd->add_flag("--wide", space.wide,
                "also GPipe and ZB-H2, ZeRO 2 and 3, micro-batch 8, PipeOffload 0.5 and 1");
  cmd->add_flag("--exhaustive", args->exhaustive,
                "simulate every candidate that fits in memory (no pruning by the time bound)");
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->callback([args] { run_plan(*args); });
}

}  // namespace hetsim::cli

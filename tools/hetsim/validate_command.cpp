// `hetsim validate FILE`: checks a cluster, model, timetable or trace file and says what it is.
// `hetsim validate --suite`: the published runs of tools/hetsim/validation_suite.hpp, simulated.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "base/error.hpp"
#include "base/report_json.hpp"
#include "base/json_input.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "schedules/timetable_json.hpp"
#include "schedules/validator.hpp"
#include "sim/cluster_gpu_types.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"
#include "tools/hetsim/published_suite.hpp"
#include "tools/hetsim/validation_suite.hpp"
#include "topologies/cluster_loader.hpp"
#include "traces/trace_validator.hpp"

namespace hetsim::cli {

namespace {

// Traces are checked by streaming (they can be hundreds of MB); the kind is told from the first
// bytes: an array or an object whose first key is "traceEvents" or "displayTimeUnit".
bool looks_like_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "an unreadable file", "a readable JSON file");
  char head[256] = {};
  in.read(head, sizeof head - 1);
  const std::string text(head);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return false;
  if (text[first] == '[') return true;
  return text.find("\"traceEvents\"") != std::string::npos ||
         text.find("\"displayTimeUnit\"") != std::string::npos;
}

void validate_file(const std::string& path) {
  if (looks_like_trace(path)) {
    const TraceSummary s = validate_trace_file(path);
    fmt::print("{}: valid trace: {} events ({} slices, {} counters, {} flows) in {} processes, {} threads\n",
               path, s.events, s.slices, s.counters, s.flows, s.processes, s.threads);
    return;
  }
  const nlohmann::json doc = read_json_file(path);
  const JsonInput root(doc, path);
  if (!doc.is_object()) root.fail("a cluster, model config, timetable or trace (a JSON object)");
  if (doc.contains("sites")) {
    const GpuCatalog catalog = GpuCatalog::load(gpu_catalog_dir());
    const ClusterSpec spec = load_cluster_spec(path, catalog.keys());
    catalog_with_cluster_types(catalog, spec);  // its own GPU types' figures are checked too
    const Cluster cluster = build_cluster(spec);
    fmt::print("{}: valid cluster \"{}\": {} GPUs in {} nodes, {} sites{}\n", path, cluster.name(),
               cluster.gpu_count(), cluster.node_count(), cluster.sites().size(),
               spec.gpu_types.empty() ? "" : fmt::format(", {} GPU types of its own", spec.gpu_types.size()));
  } else if (doc.contains("peak_tflops")) {
    // A GPU file is read as the catalog reads it: its key is its file name.
    const std::filesystem::path file(path);
    const GpuCatalog catalog = GpuCatalog::load(file.parent_path().empty() ? "." : file.parent_path().string());
    const GpuSpec& gpu = catalog.at(file.stem().string());
    fmt::print("{}: valid GPU type \"{}\" ({}): {:.4g} GiB, {:.4g} dense bf16 TFLOP/s\n", path, gpu.key,
               gpu.display_name, gpu.hbm_bytes / (1024.0 * 1024 * 1024), gpu.peak(Dtype::kBf16) / 1e12);
  } else if (doc.contains("ops")) {  // stage_of is optional (looped placement)
    const Timetable t = timetable_from_json(doc, path);
    validate(t, path);
    fmt::print("{}: valid timetable \"{}\": {} ranks, {} microbatches, {} chunks per rank\n", path,
               t.kind, t.ranks, t.microbatches, t.chunks_per_rank);
  } else if (doc.contains("hidden_size") || doc.contains("n_embd")) {
    const TransformerConfig m = load_transformer_config(path);
    fmt::print("{}: valid model \"{}\": {} layers, hidden {}, {:.3g}B parameters\n", path, m.name,
               m.num_layers, m.hidden_size, m.total_params() / 1e9);
    for (const std::string& field : m.ignored_fields) fmt::print("  not modelled: {}\n", field);
  } else {
    root.fail("a cluster (\"sites\"), a model config (\"hidden_size\"/\"n_embd\"), a GPU type "
              "(\"peak_tflops\"), a timetable (\"ops\") or a trace (\"traceEvents\")");
  }
}

struct ValidateArgs {
  std::string path;
  bool suite = false;
  bool json = false;
};

void run_suite(bool json) {
  const validation::SuiteResult result = validation::run_suite(data_directory());
  const validation::PublishedSuiteResult published = validation::run_published_suite(data_directory());
  if (json) {
    nlohmann::json doc = validation::suite_json(result);
    doc["published_runs"] = validation::published_suite_json(published);
    fmt::print("{}\n", dump_report(doc, 2));
  } else {
    fmt::print("{}\n{}", validation::suite_table(result), validation::published_suite_table(published));
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check a cluster, model config, timetable or Chrome trace file (for traces: the rules "
      "Perfetto's JSON importer applies), or with --suite simulate the published runs (Megatron-LM "
      "on Selene, and tests/validation/published_runs.json: link-shaped pipelines, mixed GPUs, "
      "MegaScale, Megatron-Bridge, ...) and print measured against simulated figures.\nExample: hetsim validate run.json\n"
      "         hetsim validate --suite --json");
  cmd->add_option("file", args->path, "the file to check");
  cmd->add_flag("--suite", args->suite,
                "run the validation suite (Narayanan et al. 2021, Korthikanti et al. 2022, and the "
                "published runs of tests/data/published-runs) instead of checking a file");
  cmd->add_flag("--json", args->json, "with --suite: print the suite's cases and errors as JSON");
  cmd->callback([args] {
    if (args->suite && !args->path.empty())
      throw Error("validate: got FILE \"" + args->path + "\" and --suite; expected one of them");
    if (args->json && !args->suite) throw Error("validate: --json goes with --suite; expected --suite --json");
    if (args->suite) return run_suite(args->json);
    if (args->path.empty()) throw Error("validate: got no FILE; expected a FILE to check or --suite");
    validate_file(args->path);
  });
}

}  // namespace hetsim::cli

// `hetsim validate FILE`: checks a cluster, model, timetable or trace file and says what it is.
#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "base/error.hpp"
#include "base/json_input.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "schedules/timetable_json.hpp"
#include "schedules/validator.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"
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
    const Cluster cluster = load_cluster(path, catalog.keys());
    fmt::print("{}: valid cluster \"{}\": {} GPUs in {} nodes, {} sites\n", path, cluster.name(),
               cluster.gpu_count(), cluster.node_count(), cluster.sites().size());
  } else if (doc.contains("ops")) {  // stage_of is optional (looped placement)
    const Timetable t = timetable_from_json(doc, path);
    validate(t);
    fmt::print("{}: valid timetable \"{}\": {} ranks, {} microbatches, {} chunks per rank\n", path,
               t.kind, t.ranks, t.microbatches, t.chunks_per_rank);
  } else if (doc.contains("hidden_size") || doc.contains("n_embd")) {
    const TransformerConfig m = load_transformer_config(path);
    fmt::print("{}: valid model \"{}\": {} layers, hidden {}, {:.3g}B parameters\n", path, m.name,
               m.num_layers, m.hidden_size, m.total_params() / 1e9);
  } else {
    root.fail("a cluster (\"sites\"), a model config (\"hidden_size\"/\"n_embd\"), a timetable "
              "(\"ops\") or a trace (\"traceEvents\")");
  }
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check a cluster, model config, timetable or Chrome trace file (for traces: the rules "
      "Perfetto's JSON importer applies).\nExample: hetsim validate run.json");
  cmd->add_option("file", *path, "the file to check")->required();
  cmd->callback([path] { validate_file(*path); });
}

}  // namespace hetsim::cli

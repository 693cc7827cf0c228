// `hetsim merge`: the files of a sharded sweep (`sweep --shard i/N`, e.g. a Slurm job array)
// joined into the file one process would have written, and summarised.
#include <fmt/format.h>

#include <map>
#include <memory>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/sweep/sweep_file.hpp"
#include "tools/sweep/sweep_report.hpp"

namespace hetsim::cli {

namespace {

using namespace hetsim::sweep;

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out;
  ReportRequest report;
};

// The sweep a shard's file belongs to, without which shard it is.
nlohmann::json unsharded(nlohmann::json header) {
  header["sweep"].erase("shard");
  return header;
}

void run(const MergeArgs& args) {
  nlohmann::json header;
  std::map<std::size_t, nlohmann::json> lines;  // by index
  for (const std::string& path : args.inputs) {
    SweepFile file = read_sweep_file(path);
    const nlohmann::json sweep = unsharded(file.header);
    if (header.is_null()) header = sweep;
    if (sweep != header || !header["sweep"]["points"].is_number_unsigned())
      throw Error(
          fmt::format("{}: line 1: the file holds another sweep ({}) than {} ({}); merge the "
                      "shards of one sweep",
                      path, file.header.dump(), args.inputs.front(), header.dump()));
    for (nlohmann::json& line : file.lines) {
      const std::size_t index = line["index"].get<std::size_t>();
      const auto [it, added] = lines.emplace(index, line);
      if (!added && it->second != line)
        throw Error(fmt::format("{}: point {} differs from the same point in an earlier file", path,
                                index));
    }
  }
  const std::size_t points = header["sweep"]["points"].get<std::size_t>();
  for (std::size_t index = 0; index < points; ++index)
    if (lines.count(index) == 0)
      throw Error(
          fmt::format("{} of {} points are missing, point {} the first; merge every shard's file "
                      "(and resume unfinished shards with sweep --resume)",
                      points - lines.size(), points, index));
  if (lines.size() != points)
    throw Error(
        fmt::format("point {} is beyond the sweep's {} points", lines.rbegin()->first, points));

  std::vector<nlohmann::json> by_index;
  for (auto& [index, line] : lines) by_index.push_back(std::move(line));
  if (!args.out.empty()) {
    AtomicFile out(args.out);
    out.stream() << header.dump() << "\n";
    for (const nlohmann::json& line : by_index) out.stream() << line.dump() << "\n";
    out.commit();
  }
  report_sweep(by_index, points, args.report);
}

}  // namespace

void add_merge_command(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Join the output files of a sharded sweep (sweep --shard i/N) into one, points in sweep "
      "order, "
      "and print the sweep's summary. Every point must be in some file.\n"
      "Example: hetsim merge shard-*.jsonl --out sweep.jsonl --csv sweep.csv --svg pareto.svg");
  cmd->add_option("files", args->inputs, "the shards' --out files")->required();
  cmd->add_option("--out", args->out,
                  "merged JSON lines: the sweep's header, then every point by index");
  cmd->add_option("--csv", args->report.csv, "one row per point: its keys and headline figures");
  cmd->add_option("--svg", args->report.svg,
                  "plot of time vs cost per million tokens with the Pareto front");
  cmd->add_flag("--json", args->report.json, "print the summary as JSON");
  cmd->callback([args] {
    args->report.title = "hetsim merge of " + std::to_string(args->inputs.size()) + " files";
    run(*args);
  });
}

}  // namespace hetsim::cli

// `hetsim sweep`: many jobs from one spec, on every core and, under mpirun, on every rank.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"
#include "tools/sweep/point_runner.hpp"
#include "tools/sweep/shard.hpp"
#include "tools/sweep/sweep_file.hpp"
#include "tools/sweep/sweep_progress.hpp"
#include "tools/sweep/sweep_ranks.hpp"
#include "tools/sweep/sweep_report.hpp"
#include "tools/sweep/sweep_spec.hpp"

namespace hetsim::cli {

namespace {

using namespace hetsim::sweep;

struct SweepArgs {
  std::string spec;
  std::string out;
  std::string shard;
  int jobs = 0;
  bool resume = false;
  ReportRequest report;
};

// How long the main thread waits for a local point before it does its MPI part (rank 0: take
// other ranks' lines; the others: let their sends progress). Alone, it only has to wake to exit.
constexpr auto kPollOthers = std::chrono::milliseconds(2);
constexpr auto kPollAlone = std::chrono::milliseconds(200);

// Rank 0's start: the points still to run, with the lines a resumed file already holds, and the
// writer of the output (null without --out).
struct Start {
  std::vector<std::size_t> pending;
  std::vector<nlohmann::json> lines;
  std::unique_ptr<LineWriter> writer;
};

// Whether `path` holds a whole first line: a sweep killed while writing its header left none,
// and starts again from nothing.
bool holds_header_line(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  return std::getline(in, first) && !in.eof();
}

// On resume, a file without a whole first line is started afresh only when what it holds is
// the start of this sweep's header (a sweep killed while writing it): anything else is someone's
// data, which --resume must not replace.
void check_replaceable(const std::string& path, const std::string& header_line) {
  std::ifstream in(path, std::ios::binary);
  std::string held(header_line.size() + 1, '\0');
  in.read(held.data(), static_cast<std::streamsize>(held.size()));
  held.resize(static_cast<std::size_t>(in.gcount()));
  if (held.empty() || header_line.compare(0, held.size(), held) == 0) return;
  throw Error(fmt::format("{}: --resume: the file holds data that is not the start of this sweep's "
                          "header; expected a file this sweep wrote (remove it, or choose another --out)",
                          path));
}

Start start_output(const SweepArgs& args, const SweepSpec& spec, const Shard& shard,
                   const std::vector<std::size_t>& selected) {
  Start start;
  start.pending = selected;
  if (args.out.empty()) return start;
  const nlohmann::json header = sweep_header(spec, shard);
  // Locked before the file is read or cut.
  start.writer = std::make_unique<LineWriter>(args.out, true);
  const bool resumable = args.resume && holds_header_line(args.out);
  if (resumable) {
    SweepFile file = read_sweep_file(args.out);
    start.pending = points_to_resume(file, args.out, header, spec, selected);
    start.lines = std::move(file.lines);
    start.writer->truncate(file.whole_bytes);  // drop a torn last line
    return start;
  }
  if (args.resume) check_replaceable(args.out, header.dump() + "\n");
  start.writer->truncate(0);
  start.writer->write(header);
  return start;
}

// What every rank reads before the points are shared out.
struct Setup {
  SweepSpec spec;
  Shard shard;
  GpuCatalog catalog;
  std::vector<std::size_t> selected;  // the shard's points
};

Setup set_up(const SweepArgs& args) {
  if (args.resume && args.out.empty())
    throw Error("--resume: needs --out FILE.jsonl, the file to resume");
  if (args.jobs < 0)
    throw Error(
        fmt::format("--jobs: got {}; expected a thread count >= 1 (0: every core)", args.jobs));
  Setup setup{load_sweep_spec(args.spec),
              args.shard.empty() ? Shard{} : parse_shard(args.shard, "--shard"),
              GpuCatalog::load(gpu_catalog_dir()),
              {}};
  std::vector<std::size_t> all(setup.spec.point_count);
  std::iota(all.begin(), all.end(), std::size_t{0});
  setup.selected = share_of(all, setup.shard.index, setup.shard.count);
  return setup;
}

void run(SweepArgs& args) {
  SweepRanks ranks;
  std::optional<Setup> setup;
  Start start;
  try {
    setup.emplace(set_up(args));
    if (ranks.rank() == 0) start = start_output(args, setup->spec, setup->shard, setup->selected);
  } catch (const Error& e) {
    // Rank 0 reports why it cannot start; the others, reading the same inputs, stop quietly
    // rather than print the same line again, unless rank 0 went on without them.
    if (ranks.rank() == 0) {
      ranks.broadcast_points(start.pending, false);
      throw;
    }
    if (!ranks.broadcast_points(start.pending, true)) return;
    ranks.abort_all(e.what());
  }
  if (!ranks.broadcast_points(start.pending, true)) return;  // rank 0 could not start and says why
  const SweepSpec& spec = setup->spec;
  const std::vector<std::size_t>& selected = setup->selected;
  const int jobs =
      args.jobs > 0
          ? args.jobs
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / ranks.local_size());
  PointRunner runner(spec, setup->catalog, share_of(start.pending, ranks.rank(), ranks.size()),
                     jobs);

  if (ranks.rank() != 0) {
    while (!runner.done()) {
      std::vector<std::string> lines;
      for (const nlohmann::json& line : runner.take(kPollOthers)) lines.push_back(line.dump());
      ranks.send_lines(lines);
    }
    ranks.send_finished();
    return;
  }
  try {
    SweepProgress progress(selected.size(), selected.size() - start.pending.size(),
                           ::isatty(STDERR_FILENO) == 1);
    const auto keep = [&](nlohmann::json line) {
      if (start.writer) start.writer->write(line);
      start.lines.push_back(std::move(line));
      progress.advance(1);
    };
    for (bool others = ranks.size() > 1; others || !runner.done();) {
      for (nlohmann::json& line : runner.take(ranks.size() > 1 ? kPollOthers : kPollAlone))
        keep(std::move(line));
      std::vector<std::string> received;
      others = others && ranks.receive_lines(received);
      for (const std::string& text : received) keep(nlohmann::json::parse(text));
    }
    progress.finish();
    sort_by_index(start.lines);
    report_sweep(start.lines, selected.size(), args.report);
  } catch (const Error& e) {
    ranks.abort_all(e.what());
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run many jobs from a spec: a base job and axes (their cartesian product) or a list of "
      "points, "
      "keyed by run's long flag names without dashes, plus gpu_type, wan_bandwidth_Gbps and "
      "wan_latency_ms. Points run on every core; under mpirun on every rank, rank 0 writing the "
      "output. "
      "Prints the fastest point, the cheapest per token and the Pareto front of time vs cost.\n"
      "Example: hetsim sweep tools/sweep/examples/llama-3-8b-plans.json --out plans.jsonl --csv "
      "plans.csv "
      "--svg plans.svg");
  cmd->add_option("spec", args->spec, "sweep spec JSON (README: Sweeps)")->required();
  cmd->add_option(
      "--out", args->out,
      "JSON lines: a header, then one line per point as it finishes: the point and its report, or "
      "its error");
  cmd->add_option("--csv", args->report.csv, "one row per point: its keys and headline figures");
  cmd->add_option("--svg", args->report.svg,
                  "plot of time vs cost per million tokens with the Pareto front");
  cmd->add_option("-j,--jobs", args->jobs,
                  "threads (0: every core, shared among the ranks on a machine)")
      ->capture_default_str();
  cmd->add_flag("--resume", args->resume,
                "keep the points --out already holds (dropping a torn last line) and run the rest");
  cmd->add_option(
      "--shard", args->shard,
      "run only shard i of N (every N-th point from the i-th), e.g. a Slurm array task's "
      "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; join the shards' files with hetsim merge");
  cmd->add_flag("--json", args->report.json, "print the summary as JSON");
  cmd->callback([args] {
    args->report.title = "hetsim sweep " + std::filesystem::path(args->spec).filename().string();
    run(*args);
  });
}

}  // namespace hetsim::cli

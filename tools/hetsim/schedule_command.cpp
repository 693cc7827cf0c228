// `hetsim schedule`: a pipeline timetable replayed with abstract op times, no cluster.
#include <fmt/format.h>

#include <memory>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/report_json.hpp"
#include "schedules/generators.hpp"
#include "schedules/timetable_json.hpp"
#include "schedules/validator.hpp"
#include "schedules/zb_auto.hpp"
#include "sim/abstract_schedule.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/run_options.hpp"
#include "traces/schedule_svg.hpp"
#include "traces/schedule_text.hpp"

namespace hetsim::cli {

namespace {

struct ScheduleArgs {
  std::string kind = "1f1b";
  int pp = 4;
  int microbatches = 8;
  int chunks = 1;
  int sequence_splits = 1;
  int memory_limit = 0;
  AbstractCosts costs;
  std::string timetable;
  std::string svg;
  std::string export_path;
  bool text = false;
  bool json = false;
};

// Keeps every op's times for the drawings.
class TimedOpCollector : public ReplayObserver {
 public:
  void on_compute(const ComputeRecord& r) override {
    ops.push_back(TimedOp{r.rank, to_char(r.op.kind), r.op.microbatch, r.op.chunk, r.start_s, r.end_s});
  }
  void on_copy(const CopyRecord& r) override {
    ops.push_back(TimedOp{r.worker, r.offload ? 'O' : 'R', r.op.microbatch, r.op.chunk, r.start_s, r.end_s});
  }
  std::vector<TimedOp> ops;
};

void write_file(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.stream() << text;
  file.commit();
}

// zb-auto searches with the given op times and memory limit; the others take only their shape.
Timetable generate(const ScheduleArgs& args) {
  if (args.kind == "zb-auto" && args.chunks == 1) {
    check_timetable_size(args.kind, args.pp, args.microbatches, 1);
    const double weight = args.costs.weight > 0 ? args.costs.weight : args.costs.backward;
    return make_zb_auto(args.pp, args.microbatches,
                        ZbAutoOptions{args.costs.forward, args.costs.backward, weight,
                                      args.costs.transfer, args.memory_limit});
  }
  return make_timetable(args.kind, args.pp, args.microbatches,
                        args.sequence_splits > 1 ? args.sequence_splits : args.chunks);
}

void run(const ScheduleArgs& args) {
  // Both print to standard output, and a grid inside the JSON would make it unreadable to parsers.
  if (args.json && args.text)
    throw Error("--json and --text both print to standard output; give one (--svg draws the schedule to a file)");
  const Timetable timetable = args.timetable.empty() ? generate(args) : load_timetable(args.timetable);
  if (args.timetable.empty())
    validate(timetable);
  else
    validate(timetable, args.timetable);
  TimedOpCollector collector;
  const ScheduleReplay result = replay_schedule(timetable, args.costs, &collector);
  if (!args.export_path.empty()) write_file(args.export_path, timetable_to_json(timetable).dump(1) + "\n");
  if (!args.svg.empty())
    write_file(args.svg, schedule_svg(collector.ops, timetable.ranks,
                                      fmt::format("{} p={} m={} v={}", timetable.kind, timetable.ranks,
                                                  timetable.microbatches, timetable.chunks_per_rank)));
  if (args.json) {
    const nlohmann::json report{{"kind", timetable.kind},
                                {"pp", timetable.ranks},
                                {"microbatches", timetable.microbatches},
                                {"chunks_per_rank", timetable.chunks_per_rank},
                                {"f", args.costs.forward},
                                {"b", args.costs.backward},
                                {"w", args.costs.weight},
                                {"comm", args.costs.transfer},
                                {"makespan", result.makespan},
                                {"bubble_fraction", result.bubble_fraction},
                                {"bubble_fraction_per_rank", result.bubble_fraction_per_rank},
                                {"bubble_span_fraction", result.bubble_span_fraction},
                                {"max_rank_idle", result.max_rank_idle},
                                {"peak_activations", result.peak_activations},
                                {"events", result.events}};
    fmt::print("{}\n", dump_report(report, 2));
  } else {
    fmt::print("{} schedule, p={} m={} v={}: makespan {:.6g}\n", timetable.kind, timetable.ranks,
               timetable.microbatches, timetable.chunks_per_rank, result.makespan);
    fmt::print("  bubble_fraction {:.4f}, bubble_span_fraction {:.4f}, max_rank_idle {:.6g}\n",
               result.bubble_fraction, result.bubble_span_fraction, result.max_rank_idle);
    for (int r = 0; r < timetable.ranks; ++r)
      fmt::print("  rank {:>3}: bubble {:.4f}, peak activations {:.4g} microbatches\n", r,
                 result.bubble_fraction_per_rank[r], result.peak_activations[r]);
  }
  if (args.text) {
    const double unit = std::min({args.costs.forward, args.costs.backward,
                                  args.costs.weight > 0 ? args.costs.weight : args.costs.forward}) /
                        timetable.chunks_per_rank;
    fmt::print("{}", schedule_text(collector.ops, timetable.ranks, unit));
  }
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto args = std::make_shared<ScheduleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "schedule",
      "Replay a pipeline schedule with abstract op times (no cluster) and report its makespan, peak "
      "activations per rank (in microbatches of one stage) and the bubble under the three definitions "
      "in use:\n  bubble_fraction       idle share of all ranks over the makespan (Megatron, GPipe)\n"
      "  bubble_span_fraction  idle share of the longest single-rank span, first op to last "
      "(zero-bubble papers)\n  max_rank_idle         largest idle time of any rank (DualPipe)\nExample: hetsim schedule --kind 1f1b --pp 8 --mb 16 --f 1 --b 2 "
      "--json --svg 1f1b.svg");
  cmd->add_option("--kind", args->kind, "schedule kind: " + schedule_kind_list())->capture_default_str();
  cmd->add_option("--seq-splits", args->sequence_splits, "sequence segments per microbatch (seq1f1b's k)")
      ->capture_default_str();
  cmd->add_option("--pp", args->pp, "pipeline ranks p")->capture_default_str();
  cmd->add_option("--mb,--microbatches", args->microbatches, "microbatches m")->capture_default_str();
  cmd->add_option("--vpp,--chunks", args->chunks, "model chunks per rank v")->capture_default_str();
  cmd->add_option("--f", args->costs.forward, "forward time of one stage")->capture_default_str();
  cmd->add_option("--b", args->costs.backward,
                  "backward time of one stage (input gradient only when --w is given)")->capture_default_str();
  cmd->add_option("--w", args->costs.weight, "weight-gradient time of one stage")->capture_default_str();
  cmd->add_option("--comm", args->costs.transfer, "time of every transfer between ranks")->capture_default_str();
  cmd->add_option("--offload-fraction", args->costs.offload_fraction,
                  "PipeOffload: share of activations copied to host memory between F and B (0..1)")
      ->capture_default_str();
  cmd->add_option("--offload-time", args->costs.offload,
                  "time to copy one stage's activations to or from host memory")->capture_default_str();
  cmd->add_option("--memory-limit", args->memory_limit,
                  "zb-auto: activations per rank, in microbatches of one stage (0: 2p-1)")->capture_default_str();
  cmd->add_option("--timetable", args->timetable, "replay this timetable JSON instead of --kind");
  cmd->add_option("--export", args->export_path, "write the timetable as JSON to this file");
  cmd->add_option("--svg", args->svg, "draw the schedule as SVG to this file");
  cmd->add_flag("--text", args->text, "print the schedule as a character grid");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->callback([args] { run(*args); });
}

}  // namespace hetsim::cli

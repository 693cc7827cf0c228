// `hetsim bench`: the standard benchmark scenarios in one process
// (tools/bench/bench_scenarios.hpp), each with the events it processed, its median wall time
// (whole, and of its event loop alone), events per second, peak resident memory and its rates
// against a bare binary-heap loop of the same event count and population.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/data_directory.hpp"
#include "base/error.hpp"
#include "base/report_json.hpp"
#include "tools/bench/bench_scenarios.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"

namespace hetsim::cli {

namespace {

struct BenchArgs {
  std::vector<std::string> scenarios;  // empty: all
  int repeats = 3;
  bool json = false;
};

std::vector<bench::Scenario> chosen(const BenchArgs& args, const GpuCatalog& catalog) {
  std::vector<bench::Scenario> all = bench::standard_scenarios(data_directory(), catalog);
  if (args.scenarios.empty()) return all;
  std::vector<bench::Scenario> picked;
  for (const std::string& name : args.scenarios) {
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const bench::Scenario& s) { return s.name == name; });
    if (it == all.end()) {
      std::string known;
      for (const bench::Scenario& s : all) known += (known.empty() ? "" : ", ") + s.name;
      throw Error(fmt::format("--scenario: got \"{}\"; expected one of {}", name, known));
    }
    picked.push_back(*it);
  }
  return picked;
}

void run(const BenchArgs& args) {
  if (args.repeats < 1 || args.repeats > 100)
    throw Error(fmt::format("--repeats: got {}; expected 1 to 100", args.repeats));
  const GpuCatalog catalog = GpuCatalog::load(gpu_catalog_dir());
  const std::vector<bench::Scenario> scenarios = chosen(args, catalog);
  if (!args.json)
    fmt::print("{:<15} {:>10} {:>9} {:>13} {:>13} {:>19} {:>12} {:>24}\n", "scenario", "events",
               "wall_s", "events_per_s", "peak_rss_mib", "ratio_to_bare_loop", "loop_wall_s",
               "loop_ratio_to_bare_loop");
  nlohmann::json out = {{"repeats", args.repeats}, {"scenarios", nlohmann::json::array()}};
  for (const bench::Scenario& scenario : scenarios) {
    const bench::Measurement m = bench::measure(scenario, args.repeats);
    if (args.json) {
      out["scenarios"].push_back({{"name", m.name},
                                  {"description", m.description},
                                  {"events", m.events},
                                  {"wall_s", m.wall_s},
                                  {"events_per_s", m.events_per_s},
                                  {"loop_wall_s", m.loop_wall_s},
                                  {"loop_events_per_s", m.loop_events_per_s},
                                  {"mean_pending", m.mean_pending},
                                  {"peak_rss_mib", m.peak_rss_mib},
                                  {"simulated_s", m.simulated_s},
                                  {"bare_loop_wall_s", m.bare_loop_wall_s},
                                  {"bare_loop_events_per_s", m.bare_loop_events_per_s},
                                  {"ratio_to_bare_loop", m.ratio_to_bare_loop},
                                  {"loop_ratio_to_bare_loop", m.loop_ratio_to_bare_loop}});
    } else {
      fmt::print("{:<15} {:>10} {:>9.3f} {:>13.0f} {:>13.1f} {:>19.3f} {:>12.3f} {:>24.3f}\n",
                 m.name, m.events, m.wall_s, m.events_per_s, m.peak_rss_mib, m.ratio_to_bare_loop,
                 m.loop_wall_s, m.loop_ratio_to_bare_loop);
      std::fflush(stdout);
    }
  }
  if (args.json) fmt::print("{}\n", dump_report(out, 2));
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time the standard scenarios (1,024- and 16,384-GPU replays of a training iteration, a "
      "flow-simulated ring all-reduce over 128 GPUs) in one process: events, median wall time of "
      "the whole scenario and of its event loop alone, events/s, peak resident memory, and both "
      "rates against a bare binary-heap loop of the same event count and mean population of "
      "pending events. Build with -DCMAKE_BUILD_TYPE=Release for figures worth comparing.\n"
      "Example: hetsim bench --scenario replay-1k --repeats 5 --json");
  cmd->add_option("--scenario", args->scenarios,
                  "run only these: replay-1k, replay-16k, flat-ring-128");
  cmd->add_option("--repeats", args->repeats,
                  "runs of each scenario; the median wall time is reported")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the measurements as JSON");
  cmd->callback([args] { run(*args); });
}

}  // namespace hetsim::cli

// hetsim: what-if simulation of large-model training on heterogeneous GPU clusters.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "hetsim_version.hpp"
#include "tools/calibrate/calibrate_command.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/usage_error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "hetsim: replay a training iteration of a large model on a GPU cluster and report time, "
      "bubbles, memory, dollars and energy.\n\nExample:\n  hetsim run                       # the "
      "shipped default what-if\n  hetsim schedule --kind 1f1b --pp 4 --mb 8 --text"};
  app.set_version_flag("--version", std::string("hetsim ") + HETSIM_VERSION + " (commit " + HETSIM_COMMIT + ")",
                       "print the version and the git commit built, then exit");
  app.require_subcommand(1);
  hetsim::cli::add_run_command(app);
  hetsim::cli::add_schedule_command(app);
  hetsim::cli::add_validate_command(app);
  hetsim::cli::add_collective_command(app);
  hetsim::cli::add_sweep_command(app);
  hetsim::cli::add_merge_command(app);
  hetsim::cli::add_bench_command(app);
  hetsim::cli::add_serve_command(app);
  hetsim::cli::add_plan_command(app);
  hetsim::add_calibrate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and its kind are the only "errors" that succeed.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fflush(stdout);
    fmt::print(stderr, "hetsim: error: {}\n",
               hetsim::cli::describe_usage_error(app, e, std::vector<std::string>(argv + 1, argv + argc)));
    return 2;
  } catch (const hetsim::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "hetsim: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "hetsim: internal error: {}\n", e.what());
    return 2;
  }
  return 0;
}

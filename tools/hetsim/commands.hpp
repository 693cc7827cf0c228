#pragma once
// The subcommands of the `hetsim` command line. Each registers its options on the app and runs
// from a callback; failures are thrown as hetsim::Error and turned into one line by main().
#include <CLI/CLI.hpp>

namespace hetsim::cli {

void add_run_command(CLI::App& app);
void add_schedule_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_merge_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_plan_command(CLI::App& app);

}  // namespace hetsim::cli

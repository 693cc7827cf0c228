#pragma once
// `hetsim calibrate`: runs the CUDA suite (hetsim-calibrate-suite, next to the hetsim binary) to
// measure this machine's GPUs, refits a profile from raw measurements, or prints a profile beside
// a plain roofline. Needs no CUDA itself; failures throw hetsim::Error.
#include <CLI/CLI.hpp>

namespace hetsim {

void add_calibrate_command(CLI::App& app);

}  // namespace hetsim

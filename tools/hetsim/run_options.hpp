#pragma once
// The options of `hetsim run`, registered on any CLI11 app, and their translation into the
// simulator's RunOptions. `run` parses them from its command line; `sweep` parses every point
// through the same registration, so a sweep key means exactly what the flag of that name means.
#include <CLI/CLI.hpp>
#include <string>

#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"

namespace hetsim::cli {

// One job's flags as given, before the model is known (vpp from layers per virtual stage needs it).
struct RunArgs {
  std::string cluster;
  std::string model;
  std::string timetable;
  std::string recompute = "none";
  std::string collectives = "flow";
  std::string placement = "megatron";
  bool bf16 = false;
  bool fp16 = false;
  bool fp32 = false;
  bool no_tf32 = false;
  std::string fp8_format;
  bool no_async_tp_allreduce = false;           // --no-async-tensor-model-parallel-allreduce
  bool no_gradient_accumulation_fusion = false;  // --no-gradient-accumulation-fusion
  int layers_per_virtual_stage = 0;
  bool schedule_given = false;  // --schedule was given (set after parsing by the caller)
  RunOptions options;
};

// The shipped default job: Llama-3-8B with tp 4 x pp 2 x dp 4 on 4 DGX H100 nodes, micro-batch 1,
// global batch 64, sequence 8,192.
RunArgs default_run_args();

// Registers every job flag of `run` on `cmd`, writing into `args` (which must outlive `cmd`'s
// parsing). Returns the --schedule option so the caller can tell whether it was given.
CLI::Option* add_run_options(CLI::App& cmd, RunArgs& args);

// The simulator's options for `args` on `model`: precision, recomputation, collectives,
// placement, Megatron's vpp from layers per virtual stage and its interleaved default, and the
// timetable file loaded. Throws Error naming the flag for a value it cannot take.
RunOptions resolve_run_options(const RunArgs& args, const TransformerConfig& model);

// The schedule kinds make_timetable knows, comma-separated, for --help texts.
std::string schedule_kind_list();

}  // namespace hetsim::cli

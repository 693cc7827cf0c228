#pragma once
// What the model tests share: the shipped configs' paths, throwaway config files and the message
// a bad one raises, and a GPU with round figures for closed-form checks.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "models/layer_ops.hpp"
#include "models/parallel_plan.hpp"
#include "models/transformer_config.hpp"

namespace hetsim::test {

inline std::string config_path(const std::string& name) {
  return fmt::format("{}/models/configs/{}.json", HETSIM_SOURCE_DIR, name);
}

// Writes `text` to /tmp/hetsim_models_test_NAME.json and returns that path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = fmt::format("/tmp/hetsim_models_test_{}.json", name);
  std::ofstream(path) << text;
  return path;
}

// The message loading the config at `path` throws, or "(no error)".
inline std::string message_of(const std::string& path) {
  try {
    load_transformer_config(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// Not a real GPU: round peaks (100 TFLOP/s fp32 and tf32, 1 PFLOP/s bf16 and fp16, no fp8) and
// 2 TB/s, so that closed forms are easy to write by hand.
inline GpuSpec unit_gpu() {
  GpuSpec g;
  g.key = "unit";
  g.peak_flops = {1e14, 1e14, 1e15, 1e15, 0};
  g.hbm_bytes_per_s = 2e12;
  return g;
}

// A tensor-parallel plan of one microbatch shape (everything else at ParallelPlan's defaults).
inline ParallelPlan tp_plan(int tp, int micro_batch_size, int seq_length) {
  ParallelPlan plan;
  plan.tp = tp;
  plan.micro_batch_size = micro_batch_size;
  plan.seq_length = seq_length;
  return plan;
}

inline double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

// Forward FLOPs of `ops`, summed.
inline double forward_flops(const std::vector<LayerOp>& ops) {
  double sum = 0;
  for (const auto& op : ops) sum += op.forward.flops;
  return sum;
}

// The op called `name` among a layer's (or the embedding's, the LM head's) ops; a test failure
// when there is none.
inline const LayerOp& op_named(const std::vector<LayerOp>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name == name) return op;
  throw Error("no op named " + name);
}

}  // namespace hetsim::test

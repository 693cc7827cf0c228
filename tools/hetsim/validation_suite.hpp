#pragma once
// The public validation suite: published measurements of Megatron-LM training runs on NVIDIA's
// Selene (DGX A100), each replayed with simulate_training on topologies/clusters/selene-384node.json
// scaled to the run's node count, and the simulated figure set beside the measured one.
// `hetsim validate --suite` prints it; tests/validation/ fails when a paper's error grows past
// the thresholds kept in tests/validation/thresholds.json.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/parallel_plan.hpp"

namespace hetsim::validation {

// What a case compares: achieved teraFLOP/s per GPU as Narayanan et al. count them (their
// equation 3, recomputation included), or seconds per iteration.
enum class Metric { kTflopsPerGpu, kIterationSeconds };

// One published measurement and the run that produced it. Every figure names its source in
// `source`; shapes are GPT models (GELU MLP of 4h, learned positions, tied embeddings).
struct ValidationCase {
  std::string paper;   // short citation, the key of the paper's summary and thresholds
  std::string row;     // table and row, e.g. "Table 5, 530B, full recompute"
  std::string source;  // where the measured figure and the configuration were found
  Metric metric = Metric::kIterationSeconds;
  double measured = 0;  // in the metric's unit
  // Model.
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int vocab = 51200;
  int seq_length = 2048;
  // Run: GPUs = tp * pp * dp on DGX A100 nodes of 8 GPUs.
  int gpus = 0;
  int tp = 1;
  int pp = 1;
  int vpp = 1;  // model chunks per pipeline rank (interleaved 1F1B when > 1)
  int micro_batch = 1;
  int global_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  // The backward of the Megatron-LM the run used (ParallelPlan's fields of the same names).
  bool async_tp_allreduce = true;
  bool gradient_accumulation_fusion = true;
};

struct CaseResult {
  ValidationCase case_;
  double simulated = 0;          // in the metric's unit
  double error_percent = 0;      // (simulated - measured) / measured x 100
  double iteration_time_s = 0;   // simulated
};

struct PaperSummary {
  std::string paper;
  int cases = 0;
  double mean_abs_error_percent = 0;
  double max_abs_error_percent = 0;
};

struct SuiteResult {
  std::vector<CaseResult> cases;
  std::vector<PaperSummary> papers;  // in order of first appearance
};

// The published cases, in paper and table order.
const std::vector<ValidationCase>& published_cases();

// Narayanan et al. (SC'21), equation 3: FLOPs of one iteration of a GPT model with full
// activation recomputation, F = 96 B s l h^2 (1 + s / (6h) + V / (16 l h)).
double narayanan_flops_per_iteration(int global_batch, int seq_length, int layers, int hidden, int vocab);

// Runs every case on the shipped Selene cluster and GPU catalog under `data_dir`.
SuiteResult run_suite(const std::string& data_dir);

// The report: one line per case, then each paper's mean and max absolute error.
std::string suite_table(const SuiteResult& result);
nlohmann::json suite_json(const SuiteResult& result);

}  // namespace hetsim::validation

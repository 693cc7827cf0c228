#include "tools/hetsim/validation_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"

namespace hetsim::validation {

namespace {

constexpr const char* kNarayanan = "Narayanan et al. 2021 (SC'21)";
constexpr const char* kKorthikanti = "Korthikanti et al. 2022";
constexpr const char* kSeleneFile = "topologies/clusters/selene-384node.json";
constexpr int kGpusPerNode = 8;  // DGX A100

// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
// arXiv:2205.05198), Table 5: seconds per iteration with full recomputation and with selective
// recomputation plus sequence parallelism ("present work"), as also transcribed in
// calculon-ai/calculon calculon/megatron/validation.py. The runs (Table 3: heads, hidden size,
// layers, tensor and pipeline size, GPUs = tp x pp, i.e. data parallel 1, global and micro
// batch) as in calculon-ai/calculon validation/<model>_{full,seqsel}.json and
// examples/<model>.json, which also give the interleaving depth (3 model chunks per rank for
// 175B and 530B, none for 22B and 1T). Sequence 2048; vocabulary 51,200 as in Narayanan et
// al.'s GPT models (Table 3 gives none).
ValidationCase korthikanti(const std::string& model, bool present_work, double seconds, int layers,
                           int hidden, int heads, int tp, int pp, int vpp, int global_batch,
                           int micro_batch) {
  ValidationCase c;
  c.paper = kKorthikanti;
  c.row = fmt::format("Table 5, {}, {}", model,
                      present_work ? "selective recompute + sequence parallel" : "full recompute");
  c.source =
      "arXiv:2205.05198 Table 5 (iteration time); run from Table 3 via calculon-ai/calculon "
      "validation/" + model + (present_work ? "_seqsel" : "_full") + ".json";
  c.metric = Metric::kIterationSeconds;
  c.measured = seconds;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.gpus = tp * pp;
  c.tp = tp;
  c.pp = pp;
  c.vpp = vpp;
  c.global_batch = global_batch;
  c.micro_batch = micro_batch;
  c.recompute = present_work ? Recompute::kSelective : Recompute::kFull;
  c.sequence_parallel = present_work;
  return c;
}

// Narayanan et al. 2021 (arXiv:2104.04473), Table 1: weak scaling of GPT models on Selene,
// achieved TFLOP/s per GPU counting recomputation (the paper's FLOP formula). Each row is run as
// NVIDIA/Megatron-LM examples/sc21/run_table_1.sh runs it: its tensor and pipeline size, micro
// and global batch, full recomputation (--activations-checkpoint-method uniform) and, for 76B to
// 530B, --num-layers-per-virtual-pipeline-stage (interleaving depth = layers per rank / that).
ValidationCase narayanan(const std::string& model, double tflops_per_gpu, int heads, int hidden, int layers,
                         int tp, int pp, int vpp, int gpus, int global_batch, int micro_batch) {
  ValidationCase c;
  c.paper = kNarayanan;
  c.row = fmt::format("Table 1, {}, {} GPUs", model, gpus);
  c.source = "arXiv:2104.04473 Table 1; run from NVIDIA/Megatron-LM examples/sc21/run_table_1.sh (MODEL_SIZE=" +
             model + ")";
  c.metric = Metric::kTflopsPerGpu;
  c.measured = tflops_per_gpu;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.gpus = gpus;
  c.tp = tp;
  c.pp = pp;
  c.vpp = vpp;
  c.micro_batch = micro_batch;
  c.global_batch = global_batch;
  c.recompute = Recompute::kFull;
  // The Megatron-LM of the paper (examples/sc21/README.md names commit 6985e58): its
  // column-parallel layers all-reduce the input gradient after their backward
  // (copy_to_tensor_model_parallel_region; the asynchronous all-reduce came later in 2021) and its
  // wgrads accumulate through autograd (gradient-accumulation fusion came in 2022).
  c.async_tp_allreduce = false;
  c.gradient_accumulation_fusion = false;
  return c;
}

std::vector<ValidationCase> make_cases() {
  std::vector<ValidationCase> cases;
  cases.push_back(narayanan("1.7B", 137, 24, 2304, 24, 1, 1, 1, 32, 512, 16));
  cases.push_back(narayanan("3.6B", 138, 32, 3072, 30, 2, 1, 1, 64, 512, 16));
  cases.push_back(narayanan("7.5B", 142, 32, 4096, 36, 4, 1, 1, 128, 512, 16));
  cases.push_back(narayanan("18B", 135, 48, 6144, 40, 8, 1, 1, 256, 1024, 8));
  cases.push_back(narayanan("39B", 138, 64, 8192, 48, 8, 2, 1, 512, 1536, 4));
  cases.push_back(narayanan("76B", 140, 80, 10240, 60, 8, 4, 3, 1024, 1792, 2));
  cases.push_back(narayanan("145B", 148, 96, 12288, 80, 8, 8, 2, 1536, 2304, 2));
  cases.push_back(narayanan("310B", 155, 128, 16384, 96, 8, 16, 2, 1920, 2160, 1));
  cases.push_back(narayanan("530B", 163, 128, 20480, 105, 8, 35, 3, 2520, 2520, 1));
  // The last row's figure is the abstract's "502 petaFLOP/s on 3072 GPUs" (502e15 / 3072 = 163.4
  // TFLOP/s per GPU; the table rounds it to 163).
  cases.push_back(narayanan("1T", 502e3 / 3072, 160, 25600, 128, 8, 64, 1, 3072, 3072, 1));
  for (const bool present : {false, true}) {
    cases.push_back(korthikanti("22B", present, present ? 1.10 : 1.42, 48, 6144, 64, 8, 1, 1, 4, 4));
    cases.push_back(korthikanti("175B", present, present ? 13.75 : 18.13, 96, 12288, 96, 8, 8, 3, 64, 1));
    cases.push_back(korthikanti("530B", present, present ? 37.83 : 49.05, 105, 20480, 128, 8, 35, 3, 280, 1));
    cases.push_back(korthikanti("1T", present, present ? 71.49 : 94.42, 128, 25600, 160, 8, 64, 1, 512, 1));
  }
  return cases;
}

// A GPT model of the papers: GELU MLP of 4h, LayerNorm, biases, learned positions over the
// sequence, dropout, embeddings tied to the LM head (Megatron-LM's GPT).
TransformerConfig gpt_model(const ValidationCase& c) {
  TransformerConfig m;
  m.name = fmt::format("gpt-{}l-{}h", c.layers, c.hidden);
  m.num_layers = c.layers;
  m.hidden_size = c.hidden;
  m.num_heads = c.heads;
  m.num_kv_heads = c.heads;
  m.ffn_hidden_size = 4 * c.hidden;
  m.vocab_size = c.vocab;
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.has_dropout = true;
  m.tied_embeddings = true;
  m.linear_bias = true;
  m.learned_positions = c.seq_length;
  return m;
}

RunOptions run_options(const ValidationCase& c) {
  RunOptions o;
  ParallelPlan& p = o.plan;
  p.tp = c.tp;
  p.pp = c.pp;
  p.vpp = c.vpp;
  p.micro_batch_size = c.micro_batch;
  p.global_batch_size = c.global_batch;
  p.seq_length = c.seq_length;
  p.recompute = c.recompute;
  p.sequence_parallel = c.sequence_parallel;
  p.dtype = Dtype::kFp16;  // the papers' mixed precision; the A100 peak is the same for bf16
  // The Megatron-LM of both papers (2021, 2022) splits pipeline sends over the tensor-parallel
  // ranks by default (--no-scatter-gather-tensors-in-pipeline turned it off).
  p.scatter_gather_p2p = true;
  p.async_tp_allreduce = c.async_tp_allreduce;
  p.gradient_accumulation_fusion = c.gradient_accumulation_fusion;
  o.schedule = c.vpp > 1 ? "interleaved" : "1f1b";
  // Both papers' Megatron-LM batched each op's pipeline sends and receives and waited for them
  // (torch.distributed.batch_isend_irecv in p2p_communication.py; overlapping came in 2023).
  o.no_overlap_p2p_comm = true;
  return o;
}

double simulated_figure(const ValidationCase& c, double iteration_s) {
  if (c.metric == Metric::kIterationSeconds) return iteration_s;
  const double flops = narayanan_flops_per_iteration(c.global_batch, c.seq_length, c.layers, c.hidden, c.vocab);
  return flops / (iteration_s * c.gpus) / 1e12;
}

const char* unit(Metric m) { return m == Metric::kTflopsPerGpu ? "TFLOP/s per GPU" : "s per iteration"; }

}  // namespace

const std::vector<ValidationCase>& published_cases() {
  static const std::vector<ValidationCase> cases = make_cases();
  return cases;
}

double narayanan_flops_per_iteration(int global_batch, int seq_length, int layers, int hidden, int vocab) {
  const double b = global_batch, s = seq_length, l = layers, h = hidden, v = vocab;
  return 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
}

SuiteResult run_suite(const std::string& data_dir) {
  const GpuCatalog catalog = GpuCatalog::load(data_dir + "/models/gpus");
  const ClusterSpec selene = load_cluster_spec(data_dir + "/" + kSeleneFile, catalog.keys());
  const int selene_nodes = selene.sites.at(0).node_groups.at(0).count;
  SuiteResult result;
  for (const ValidationCase& c : published_cases()) {
    const int nodes = c.gpus / kGpusPerNode;
    if (c.gpus % kGpusPerNode != 0 || nodes > selene_nodes)
      throw Error(fmt::format("validation case \"{}\": {} GPUs are not whole DGX A100 nodes of {}", c.row,
                              c.gpus, kSeleneFile));
    ClusterSpec spec = selene;
    spec.name = fmt::format("selene-{}node", nodes);
    spec.sites[0].node_groups[0].count = nodes;
    const Cluster cluster = build_cluster(spec);
    const RunResult run = simulate_training(cluster, catalog, gpt_model(c), run_options(c));
    CaseResult r;
    r.case_ = c;
    r.iteration_time_s = run.iteration_time_s;
    r.simulated = simulated_figure(c, run.iteration_time_s);
    r.error_percent = (r.simulated - c.measured) / c.measured * 100;
    result.cases.push_back(r);
  }
  for (const CaseResult& r : result.cases) {
    auto it = std::find_if(result.papers.begin(), result.papers.end(),
                           [&](const PaperSummary& p) { return p.paper == r.case_.paper; });
    if (it == result.papers.end()) {
      result.papers.push_back({r.case_.paper, 0, 0, 0});
      it = result.papers.end() - 1;
    }
    const double abs_error = std::fabs(r.error_percent);
    it->cases += 1;
    it->mean_abs_error_percent += abs_error;  // a sum until divided below
    it->max_abs_error_percent = std::max(it->max_abs_error_percent, abs_error);
  }
  for (PaperSummary& p : result.papers) p.mean_abs_error_percent /= p.cases;
  return result;
}

std::string suite_table(const SuiteResult& result) {
  std::string out = fmt::format("{:<30} {:<52} {:>10} {:>10} {:>8}  {}\n", "paper", "row", "measured",
                                "simulated", "error", "unit");
  for (const CaseResult& r : result.cases) {
    out += fmt::format("{:<30} {:<52} {:>10.2f} {:>10.2f} {:>+7.1f}%  {}\n", r.case_.paper, r.case_.row,
                       r.case_.measured, r.simulated, r.error_percent, unit(r.case_.metric));
  }
  out += "\n";
  for (const PaperSummary& p : result.papers) {
    out += fmt::format("{}: {} case{}, mean |error| {:.1f}%, max |error| {:.1f}%\n", p.paper, p.cases,
                       p.cases == 1 ? "" : "s", p.mean_abs_error_percent, p.max_abs_error_percent);
  }
  return out;
}

nlohmann::json suite_json(const SuiteResult& result) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseResult& r : result.cases) {
    const ValidationCase& c = r.case_;
    cases.push_back({{"paper", c.paper},
                     {"row", c.row},
                     {"source", c.source},
                     {"unit", unit(c.metric)},
                     {"measured", c.measured},
                     {"simulated", r.simulated},
                     {"error_percent", r.error_percent},
                     {"iteration_time_s", r.iteration_time_s},
                     {"run",
                      {{"gpus", c.gpus},
                       {"tp", c.tp},
                       {"pp", c.pp},
                       {"vpp", c.vpp},
                       {"micro_batch_size", c.micro_batch},
                       {"global_batch_size", c.global_batch},
                       {"seq_length", c.seq_length},
                       {"recompute", to_string(c.recompute)},
                       {"sequence_parallel", c.sequence_parallel}}},
                     {"model", {{"layers", c.layers}, {"hidden", c.hidden}, {"heads", c.heads}, {"vocab", c.vocab}}}});
  }
  nlohmann::json papers = nlohmann::json::array();
  for (const PaperSummary& p : result.papers) {
    papers.push_back({{"paper", p.paper},
                      {"cases", p.cases},
                      {"mean_abs_error_percent", p.mean_abs_error_percent},
                      {"max_abs_error_percent", p.max_abs_error_percent}});
  }
  return {{"cases", cases}, {"papers", papers}};
}

}  // namespace hetsim::validation

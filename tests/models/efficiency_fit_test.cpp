// The roofline's efficiency curves against real measurements: Llama-2-7B forward operators on an
// A100 80GB SXM and an A40 (microsoft/vidur profiling data, tests/data/vidur/README.md). The test
// refits the four curves of each GPU (models/efficiency_fit.hpp), checks that the parameters
// shipped in models/gpus/<gpu>.json are that fit, and reports the roofline's relative error
// against every measured median.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "models/efficiency_fit.hpp"
#include "models/gpu_catalog.hpp"
#include "models/layer_ops.hpp"
#include "models/roofline.hpp"

namespace {

using hetsim::KernelKind;
using hetsim::KernelWork;

struct Sample {
  std::string op;
  KernelKind kind;
  KernelWork work;
  double tokens;
  double seconds;  // measured median
};

std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, ',');) header.push_back(cell);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::map<std::string, std::string> row;
    std::size_t i = 0;
    for (std::string cell; std::getline(ls, cell, ',') && i < header.size(); ++i) row[header[i]] = cell;
    rows.push_back(row);
  }
  return rows;
}

// The work of each measured operator, built with the same helpers the cost model uses (fp16,
// 2 bytes per element). vidur's `mlp_up_proj` is the fused gate+up GEMM of the gated MLP and
// `mlp_act` is silu(gate) * up; norms and the residual add are not sharded by TP.
std::vector<Sample> samples_of(const std::string& csv) {
  std::vector<Sample> out;
  for (const auto& r : read_csv(csv)) {
    const double tok = std::stod(r.at("num_tokens"));
    const double t = std::stod(r.at("num_tensor_parallel_workers"));
    const double h = std::stod(r.at("n_embd"));
    const double f = std::stod(r.at("n_expanded_embd"));
    const double a = std::stod(r.at("n_head"));
    const double kv = std::stod(r.at("n_kv_head"));
    const double d = h / a;
    const auto median = [&](const std::string& op) {
      return std::stod(r.at("time_stats." + op + ".median")) * 1e-3;
    };
    const auto gemm = [&](const std::string& op, double k, double n) {
      out.push_back({op, KernelKind::kGemm, hetsim::linear_op(op, tok, k, n, 2.0).forward, tok, median(op)});
    };
    gemm("attn_pre_proj", h, (a + 2 * kv) * d / t);
    gemm("attn_post_proj", h / t, h);
    gemm("mlp_up_proj", h, 2 * f / t);
    gemm("mlp_down_proj", f / t, h);
    const double ffn = tok * f / t;
    out.push_back({"mlp_act", KernelKind::kElementwise, {0, 2.0 * (2 * ffn + ffn)}, tok, median("mlp_act")});
    out.push_back({"add", KernelKind::kElementwise, {0, 2.0 * 3 * tok * h}, tok, median("add")});
    for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) {
      out.push_back({norm, KernelKind::kNorm, {0, 2.0 * 2 * tok * h}, tok, median(norm)});
    }
  }
  return out;
}

// A GEMM's compute and memory times by the two GEMM curves.
double compute_time(const Sample& s, const hetsim::RooflineEfficiency& e, double peak) {
  return hetsim::curve_seconds(e.gemm_compute, s.work.flops, peak);
}
double memory_time(const Sample& s, const hetsim::RooflineEfficiency& e, double hbm) {
  return hetsim::curve_seconds(e.gemm_memory, s.work.bytes, hbm);
}

// The GEMMs neither curve was fitted on: more than 16 and fewer than 1024 tokens, where compute
// and memory times come close.
bool between_regimes(const Sample& s) { return s.kind == KernelKind::kGemm && s.tokens > 16 && s.tokens < 1024; }

// The ridge exponent on the GEMMs between the regimes, given the two fitted GEMM curves.
double fit_ridge(const std::vector<Sample>& samples, const hetsim::RooflineEfficiency& e, double peak, double hbm) {
  std::vector<double> compute, memory, measured;
  for (const Sample& s : samples) {
    if (!between_regimes(s)) continue;
    compute.push_back(compute_time(s, e, peak));
    memory.push_back(memory_time(s, e, hbm));
    measured.push_back(s.seconds);
  }
  return hetsim::fit_ridge_exponent(compute, memory, measured);
}

// Fits the four curves: GEMM compute on GEMMs of >= 1024 tokens (compute-bound), GEMM memory on
// GEMMs of <= 16 tokens (weight-read-bound), elementwise and norm on all their points; then the
// ridge exponent on the GEMMs between.
hetsim::RooflineEfficiency fit(const std::vector<Sample>& samples, const hetsim::GpuSpec& gpu) {
  const auto fit_class = [&](auto select, auto work_of, double rate) {
    std::vector<double> x, t;
    for (const Sample& s : samples) {
      if (select(s)) {
        x.push_back(work_of(s));
        t.push_back(s.seconds);
      }
    }
    return hetsim::curve_from_fit(hetsim::fit_relative_least_squares(x, t), rate);
  };
  const auto flops = [](const Sample& s) { return s.work.flops; };
  const auto bytes = [](const Sample& s) { return s.work.bytes; };
  hetsim::RooflineEfficiency e;
  const double peak = gpu.peak(hetsim::Dtype::kFp16);
  e.gemm_compute = fit_class([](const Sample& s) { return s.kind == KernelKind::kGemm && s.tokens >= 1024; },
                             flops, peak);
  e.gemm_memory = fit_class([](const Sample& s) { return s.kind == KernelKind::kGemm && s.tokens <= 16; },
                            bytes, gpu.hbm_bytes_per_s);
  e.gemm_ridge_exponent = fit_ridge(samples, e, peak, gpu.hbm_bytes_per_s);
  e.elementwise = fit_class([](const Sample& s) { return s.kind == KernelKind::kElementwise; }, bytes,
                            gpu.hbm_bytes_per_s);
  e.norm = fit_class([](const Sample& s) { return s.kind == KernelKind::kNorm; }, bytes,
                     gpu.hbm_bytes_per_s);
  return e;
}

struct ErrorSummary {
  double median = 0, worst = 0;
  std::string worst_at;
};

ErrorSummary errors(const std::vector<Sample>& samples, const hetsim::GpuSpec& gpu) {
  std::vector<double> rel;
  ErrorSummary s;
  for (const Sample& m : samples) {
    const double model = hetsim::kernel_time(m.kind, m.work, gpu, hetsim::Dtype::kFp16);
    const double e = std::abs(model - m.seconds) / m.seconds;
    rel.push_back(e);
    if (e > s.worst) {
      s.worst = e;
      s.worst_at = m.op + " at " + std::to_string(static_cast<int>(m.tokens)) + " tokens";
    }
  }
  std::sort(rel.begin(), rel.end());
  s.median = rel[rel.size() / 2];
  return s;
}

void print_curve(const char* name, const hetsim::EfficiencyCurve& c) {
  MESSAGE(std::string(name) << ": max_efficiency " << c.max_efficiency << ", overhead_us " << c.overhead_s * 1e6);
}

void check_curve(const hetsim::EfficiencyCurve& shipped, const hetsim::EfficiencyCurve& refit) {
  CHECK(shipped.max_efficiency == doctest::Approx(refit.max_efficiency).epsilon(0.005));
  CHECK(shipped.overhead_s == doctest::Approx(refit.overhead_s).epsilon(0.01));
}

void check_gpu(const std::string& key, const std::string& folder, double median_bound,
               double worst_bound) {
  const auto catalog = hetsim::GpuCatalog::load(std::string(HETSIM_SOURCE_DIR) + "/models/gpus");
  const hetsim::GpuSpec& shipped = catalog.at(key);
  const auto samples = samples_of(std::string(HETSIM_SOURCE_DIR) + "/tests/data/vidur/compute/" + folder +
                                  "/meta-llama/Llama-2-7b-hf/mlp.csv");
  const hetsim::RooflineEfficiency refit = fit(samples, shipped);
  MESSAGE(key << " refit on " << samples.size() << " measured medians:");
  print_curve("  gemm_compute", refit.gemm_compute);
  print_curve("  gemm_memory", refit.gemm_memory);
  MESSAGE("  gemm_ridge_exponent: " << refit.gemm_ridge_exponent);
  print_curve("  elementwise", refit.elementwise);
  print_curve("  norm", refit.norm);
  check_curve(shipped.efficiency.gemm_compute, refit.gemm_compute);
  check_curve(shipped.efficiency.gemm_memory, refit.gemm_memory);
  CHECK(shipped.efficiency.gemm_ridge_exponent == doctest::Approx(refit.gemm_ridge_exponent).epsilon(0.005));
  check_curve(shipped.efficiency.elementwise, refit.elementwise);
  check_curve(shipped.efficiency.norm, refit.norm);
  const ErrorSummary e = errors(samples, shipped);
  MESSAGE(key << ": roofline vs measured medians: median relative error " << e.median * 100
              << "%, worst " << e.worst * 100 << "% (" << e.worst_at << ")");
  CHECK(e.median < median_bound);
  CHECK(e.worst < worst_bound);
}

}  // namespace

TEST_CASE("A100 80GB: the shipped efficiency curves are the fit and track the measurements") {
  check_gpu("a100-80gb", "a100", 0.12, 1.0);
}

TEST_CASE("A40: the shipped efficiency curves are the fit and track the measurements") {
  check_gpu("a40", "a40", 0.12, 1.5);
}

TEST_CASE("GEMMs between the regimes run slower than the slower of compute and memory: held out on Llama-3-8B") {
  // The A100's exponent was fitted on Llama-2-7B; Llama-3-8B's GEMMs (other widths, grouped-query
  // attention) of 17-1023 tokens on the same GPU are held out. The plain max of the two times
  // runs 9% fast on their median; the ridge exponent takes most of that away.
  const auto catalog = hetsim::GpuCatalog::load(std::string(HETSIM_SOURCE_DIR) + "/models/gpus");
  const hetsim::GpuSpec& gpu = catalog.at("a100-80gb");
  const auto samples = samples_of(std::string(HETSIM_SOURCE_DIR) +
                                  "/tests/data/vidur/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv");
  const double peak = gpu.peak(hetsim::Dtype::kFp16);
  std::vector<double> max_error, ridge_error, max_signed, ridge_signed;
  for (const Sample& s : samples) {
    if (!between_regimes(s)) continue;
    const double c = compute_time(s, gpu.efficiency, peak), m = memory_time(s, gpu.efficiency, gpu.hbm_bytes_per_s);
    const double plain = std::max(c, m) / s.seconds - 1;
    const double ridge = hetsim::kernel_time(KernelKind::kGemm, s.work, gpu, hetsim::Dtype::kFp16) / s.seconds - 1;
    CHECK(ridge == doctest::Approx(hetsim::roofline_gemm_time(c, m, gpu.efficiency.gemm_ridge_exponent) / s.seconds - 1));
    max_signed.push_back(plain);
    ridge_signed.push_back(ridge);
    max_error.push_back(std::abs(plain));
    ridge_error.push_back(std::abs(ridge));
  }
  REQUIRE(max_error.size() == 2000);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  MESSAGE("Llama-3-8B GEMMs of 17-1023 tokens on the A100: median |error| plain max "
          << median(max_error) * 100 << "%, with the ridge exponent " << median(ridge_error) * 100
          << "%; median signed error " << median(max_signed) * 100 << "% and " << median(ridge_signed) * 100 << "%");
  CHECK(median(max_signed) < -0.08);
  CHECK(std::abs(median(ridge_signed)) < 0.05);
  CHECK(median(ridge_error) < median(max_error) - 0.015);
}

TEST_CASE("the ridge blend: equal times cost 2^(1/p) of either, p = 1 adds, the default is the max") {
  CHECK(hetsim::roofline_gemm_time(3e-3, 3e-3, 2.0) == doctest::Approx(3e-3 * std::sqrt(2.0)).epsilon(1e-12));
  CHECK(hetsim::roofline_gemm_time(1e-3, 2e-3, 1.0) == doctest::Approx(3e-3).epsilon(1e-12));
  const double ideal = hetsim::RooflineEfficiency{}.gemm_ridge_exponent;
  CHECK(hetsim::roofline_gemm_time(1e-3, 2e-3, ideal) == 2e-3);
  CHECK(hetsim::roofline_gemm_time(2e-3, 2e-3, ideal) == 2e-3);
  CHECK(hetsim::roofline_gemm_time(0.0, 0.0, 2.0) == 0.0);
}

TEST_CASE("the ridge exponent fit recovers the exponent of exact blends") {
  std::vector<double> compute, memory, measured;
  for (double r = 0.05; r < 20; r *= 1.3) {
    compute.push_back(1e-4 * r);
    memory.push_back(1e-4);
    measured.push_back(hetsim::roofline_gemm_time(1e-4 * r, 1e-4, 2.7));
  }
  CHECK(hetsim::fit_ridge_exponent(compute, memory, measured) == doctest::Approx(2.7).epsilon(1e-3));
  CHECK_THROWS_AS(hetsim::fit_ridge_exponent({}, {}, {}), hetsim::Error);
  CHECK_THROWS_AS(hetsim::fit_ridge_exponent({1e-3}, {1e-3}, {0.0}), hetsim::Error);
}

TEST_CASE("the relative least-squares fit recovers an exact line") {
  // t = 2e-12 * x + 5e-6 exactly: slope and intercept come back to rounding.
  const std::vector<double> x = {1e6, 1e7, 1e8, 1e9};
  std::vector<double> t;
  for (double v : x) t.push_back(2e-12 * v + 5e-6);
  const auto f = hetsim::fit_relative_least_squares(x, t);
  CHECK(std::abs(f.slope - 2e-12) / 2e-12 < 1e-9);
  CHECK(std::abs(f.intercept - 5e-6) / 5e-6 < 1e-9);
  const auto c = hetsim::curve_from_fit(f, 1e12);  // 1 TFLOP/s peak: efficiency 1 / (2e-12 * 1e12)
  CHECK(std::abs(c.max_efficiency - 0.5) < 1e-9);
}

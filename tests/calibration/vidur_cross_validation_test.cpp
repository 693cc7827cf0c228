// Cross-validation on real measurements: vidur's forward-op timings on an A100 80GB SXM and an
// A40 (fp16, by num_tokens and TP degree; tests/data/vidur, MIT, see README-calibration.md there),
// read through the same CSV importer and column mapping a user would use. The fit sees TP degrees
// 1, 4, 8 and three of every four token counts; it predicts the rest (TP 2 at every token count,
// and the held-out token counts at every TP). Error = |predicted - measured| / measured per op.
// A plain roofline, max(2mnk / peak, bytes / bandwidth) with datasheet peaks, is scored on the
// same held-out rows for comparison.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <set>

#include "models/calibration/csv_importer.hpp"
#include "models/calibration/curves.hpp"
#include "models/calibration/evaluation.hpp"
#include "models/calibration/fit_profile.hpp"

using namespace hetsim::calibration;

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;
const std::string kMapping = kRoot + "/models/calibration/mappings/vidur_compute.json";

std::vector<Measurement> load(const std::string& relative) {
  return import_csv(kRoot + "/tests/data/vidur/" + relative, kMapping);
}

// Held out: TP 2, and every fourth distinct token count (the 3rd of each group of four).
bool held_out(const Measurement& m, const std::vector<double>& token_counts) {
  if (m.tag("tp") == 2) return true;
  const auto it = std::find(token_counts.begin(), token_counts.end(), m.tag("num_tokens"));
  return (it - token_counts.begin()) % 4 == 2;
}

// vidur records milliseconds to three decimals: 1 us steps. Below 20 us one step is more than
// 5%, so such rows cannot be scored to 5%; they are scored apart and reported, not asserted.
constexpr double kResolutionFloor = 20e-6;

struct Split {
  std::vector<Measurement> fit, test, below_floor;
};

Split split(const std::vector<std::vector<Measurement>>& files) {
  Split s;
  for (const auto& ms : files) {
    std::set<double> tokens;
    for (const auto& m : ms) tokens.insert(m.tag("num_tokens"));
    const std::vector<double> token_counts(tokens.begin(), tokens.end());
    for (const auto& m : ms) {
      if (!held_out(m, token_counts)) {
        s.fit.push_back(m);
      } else if (m.seconds >= kResolutionFloor) {
        s.test.push_back(m);
      } else {
        s.below_floor.push_back(m);
      }
    }
  }
  return s;
}

void print_table(const std::string& title, const std::map<std::string, ErrorStats>& calibrated,
                 const std::map<std::string, ErrorStats>& roofline) {
  std::cout << title << '\n'
            << fmt::format("  {:<26} {:>6} {:>13} {:>10} {:>12} {:>6} {:>15} {:>14}\n", "op", "rows",
                           "median_err_%", "p95_err_%", "worst_err_%", ">15%", "roofline_med_%", "roofline_max_%");
  for (const auto& [label, s] : calibrated) {
    const auto r = roofline.find(label);
    const std::string roof = r == roofline.end()
                                 ? fmt::format("{:>15} {:>14}", "-", "-")
                                 : fmt::format("{:15.1f} {:14.1f}", 100 * r->second.median_abs_error,
                                               100 * r->second.max_abs_error);
    std::cout << fmt::format("  {:<26} {:6} {:13.2f} {:10.2f} {:12.2f} {:6} {}\n",
                             label.empty() ? "(all)" : label, s.count, 100 * s.median_abs_error,
                             100 * s.p95_abs_error, 100 * s.max_abs_error, s.over_15_percent, roof);
  }
}

// How far the same kernel on the same shape moves between vidur's runs, the data's own
// repeatability: each held-out row of an op whose shape does not depend on the TP degree (norms, residual
// add, embedding lookup), against the median of the other TP runs' rows of the same shape at the
// same token count. Measured on one GPU each, those runs differ only in when they ran.
std::map<std::string, ErrorStats> repeatability(const std::vector<Measurement>& test,
                                                const std::vector<Measurement>& all) {
  const auto same_shape = [](const Measurement& a, const Measurement& b) {
    return a.label == b.label && a.kind == b.kind && a.op == b.op && a.m == b.m && a.n == b.n &&
           a.k == b.k && a.bytes == b.bytes && a.tag("num_tokens") == b.tag("num_tokens") &&
           a.tag("tp") != b.tag("tp");
  };
  return error_stats(test, [&](const Measurement& m) -> std::optional<double> {
    if (m.kind != OpKind::kMemoryBound || m.tag("tp") != 2) return std::nullopt;
    std::vector<double> others;
    for (const Measurement& o : all)
      if (same_shape(m, o)) others.push_back(o.seconds);
    if (others.empty()) return std::nullopt;
    return median(others);
  });
}

// The bounds the data supports (README.md): the whole held-out set within 5% median, each op
// within 10% median and 25% at the 95th percentile, and every op closer than the roofline. The
// worst single rows are not bounded: cuBLAS switches kernels between neighbouring token counts
// (A40, mlp_up_proj at TP 8: 0.055 ms at 192 tokens, 0.102 ms at 200, 0.081 ms at 224), which no
// interpolation from the neighbours can foresee; they are printed above.
void check_within_bounds(const std::map<std::string, ErrorStats>& stats,
                         const std::map<std::string, ErrorStats>& roofline) {
  CHECK(stats.at("").median_abs_error <= 0.05);
  for (const auto& entry : stats) {
    const std::string& label = entry.first;
    const ErrorStats& s = entry.second;
    INFO("op ", label, ": median ", 100 * s.median_abs_error, "%, p95 ", 100 * s.p95_abs_error, "%, worst ",
         100 * s.max_abs_error, "% at ", s.worst_source);
    CHECK(s.count > 0);
    CHECK(s.median_abs_error <= 0.10);
    CHECK(s.p95_abs_error <= 0.25);
    CHECK(s.median_abs_error < roofline.at(label).median_abs_error);
  }
}

void cross_validate(const std::string& title, const std::vector<std::vector<Measurement>>& files,
                    const Roofline& roofline) {
  const Split s = split(files);
  REQUIRE(!s.fit.empty());
  REQUIRE(!s.test.empty());
  const Profile profile = fit_profile(s.fit, GpuInfo{});
  const auto calibrated = error_stats(s.test, [&](const Measurement& m) { return predict(profile, m); });
  const auto roof = error_stats(s.test, [&](const Measurement& m) { return roofline_seconds(roofline, m); });
  print_table(fmt::format("{}: fit on {} rows, predicted {} held-out rows >= 20 us", title, s.fit.size(),
                          s.test.size()),
              calibrated, roof);
  const auto tiny = error_stats(s.below_floor, [&](const Measurement& m) { return predict(profile, m); });
  if (!tiny.empty()) {
    std::cout << fmt::format("  held-out rows under 20 us (1 us timer steps): {}, median error {:.1f}%\n",
                             tiny.at("").count, 100 * tiny.at("").median_abs_error);
  }
  std::vector<Measurement> all;
  for (const auto& ms : files) all.insert(all.end(), ms.begin(), ms.end());
  const auto repeat = repeatability(s.test, all);
  std::cout << "  repeatability: held-out TP-2 rows >= 20 us against the same shape timed in the TP 1/4/8 runs\n"
            << fmt::format("    {:<26} {:>6} {:>13} {:>10} {:>12}\n", "op", "rows", "median_diff_%", "p95_diff_%",
                           "worst_diff_%");
  for (const auto& [label, r] : repeat)
    if (!label.empty())
      std::cout << fmt::format("    {:<26} {:6} {:13.2f} {:10.2f} {:12.2f}   calibrated median {:.2f}\n", label,
                               r.count, 100 * r.median_abs_error, 100 * r.p95_abs_error, 100 * r.max_abs_error,
                               100 * calibrated.at(label).median_abs_error);
  CHECK(!repeat.empty());
  check_within_bounds(calibrated, roof);
}

}  // namespace

TEST_CASE("vidur A100 80GB: ops at unseen token counts and TP degrees are predicted from the rest") {
  // NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): FP16 Tensor Core 312 TFLOPS dense,
  // HBM2e 2,039 GB/s.
  const Roofline a100{{{"fp16", 312e12}}, 2039e9, "NVIDIA A100 datasheet"};
  // One profile per model file, as a user calibrates for the model they train.
  cross_validate("A100 80GB SXM, Llama-2-7B", {load("compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv")}, a100);
  cross_validate("A100 80GB SXM, Llama-3-8B", {load("compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv")}, a100);
}

TEST_CASE("vidur A40: ops at unseen token counts and TP degrees are predicted from the rest") {
  // NVIDIA A40 datasheet: FP16 Tensor Core 149.7 TFLOPS dense, GDDR6 696 GB/s.
  const Roofline a40{{{"fp16", 149.7e12}}, 696e9, "NVIDIA A40 datasheet"};
  cross_validate("A40, Llama-2-7B", {load("compute/a40/meta-llama/Llama-2-7b-hf/mlp.csv")}, a40);
}

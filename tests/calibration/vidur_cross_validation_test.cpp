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
#include <set>

#include "models/calibration/csv_importer.hpp"
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

struct Split {
  std::vector<Measurement> fit, test;
};

Split split(const std::vector<std::vector<Measurement>>& files) {
  Split s;
  for (const auto& ms : files) {
    std::set<double> tokens;
    for (const auto& m : ms) tokens.insert(m.tag("num_tokens"));
    const std::vector<double> token_counts(tokens.begin(), tokens.end());
    for (const auto& m : ms) (held_out(m, token_counts) ? s.test : s.fit).push_back(m);
  }
  return s;
}

void print_table(const std::string& title, const std::map<std::string, ErrorStats>& calibrated,
                 const std::map<std::string, ErrorStats>& roofline) {
  std::cout << title << '\n'
            << fmt::format("  {:<26} {:>6} {:>14} {:>13} {:>15} {:>14}\n", "op", "rows", "median_err_%",
                           "worst_err_%", "roofline_med_%", "roofline_max_%");
  for (const auto& [label, s] : calibrated) {
    const auto r = roofline.find(label);
    const std::string roof = r == roofline.end()
                                 ? fmt::format("{:>15} {:>14}", "-", "-")
                                 : fmt::format("{:15.1f} {:14.1f}", 100 * r->second.median_abs_error,
                                               100 * r->second.max_abs_error);
    std::cout << fmt::format("  {:<26} {:6} {:14.2f} {:13.2f} {}\n", label.empty() ? "(all)" : label, s.count,
                             100 * s.median_abs_error, 100 * s.max_abs_error, roof);
  }
}

void check_within_bounds(const std::map<std::string, ErrorStats>& stats) {
  for (const auto& [label, s] : stats) {
    INFO("op ", label, ": median ", 100 * s.median_abs_error, "%, worst ", 100 * s.max_abs_error, "% at ",
         s.worst_source);
    CHECK(s.count > 0);
    CHECK(s.median_abs_error <= 0.05);
    CHECK(s.max_abs_error <= 0.15);
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
  print_table(fmt::format("{}: fit on {} rows, predicted {} held-out rows", title, s.fit.size(), s.test.size()),
              calibrated, roof);
  // Every measured op class of the file is predicted.
  CHECK(calibrated.size() == 11);
  check_within_bounds(calibrated);
}

}  // namespace

TEST_CASE("vidur A100 80GB: ops at unseen token counts and TP degrees within 5% median, 15% worst") {
  // NVIDIA A100 Tensor Core GPU datasheet (80GB SXM): FP16 Tensor Core 312 TFLOPS dense,
  // HBM2e 2,039 GB/s.
  const Roofline a100{{{"fp16", 312e12}}, 2039e9, "NVIDIA A100 datasheet"};
  cross_validate("A100 80GB SXM (Llama-2-7B and Llama-3-8B shapes)",
                 {load("compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv"),
                  load("compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv")},
                 a100);
}

TEST_CASE("vidur A40: ops at unseen token counts and TP degrees within 5% median, 15% worst") {
  // NVIDIA A40 datasheet: FP16 Tensor Core 149.7 TFLOPS dense, GDDR6 696 GB/s.
  const Roofline a40{{{"fp16", 149.7e12}}, 696e9, "NVIDIA A40 datasheet"};
  cross_validate("A40 (Llama-2-7B shapes)", {load("compute/a40/meta-llama/Llama-2-7b-hf/mlp.csv")}, a40);
}

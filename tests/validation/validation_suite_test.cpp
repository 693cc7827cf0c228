// The public validation suite (tools/hetsim/validation_suite.hpp): published Megatron-LM runs on
// Selene against the simulator. Fails when a paper's mean or max absolute error exceeds the
// thresholds kept in tests/validation/thresholds.json, which record what hetsim reaches today
// (rounded up to the next whole percent) and are lowered as the model improves.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "tools/hetsim/published_suite.hpp"
#include "tools/hetsim/validation_suite.hpp"
#include "topologies/cluster_loader.hpp"

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;

using hetsim::validation::narayanan_flops_per_iteration;

}  // namespace

TEST_CASE("Narayanan et al. equation 3: 96 B s l h^2 (1 + s/6h + V/16lh), by hand") {
  // B = 2, s = 12, l = 1, h = 2, V = 32: 96 x 2 x 12 x 1 x 4 x (1 + 12/12 + 32/32) = 9216 x 3.
  const double expected = 96.0 * 2 * 12 * 1 * 4 * 3;
  const double actual = narayanan_flops_per_iteration(2, 12, 1, 2, 32);
  std::printf("eq. 3 tiny case: expected %.0f FLOPs, actual %.0f FLOPs\n", expected, actual);
  CHECK(actual == expected);
  // The 1T row of Table 1 (B 3072, s 2048, l 128, h 25600, V 51200), evaluated term by term;
  // at the paper's 502 petaFLOP/s one iteration takes F / 502e15 seconds.
  const double flops_1t = narayanan_flops_per_iteration(3072, 2048, 128, 25600, 51200);
  const double by_hand = 96.0 * 3072 * 2048 * 128 * 25600.0 * 25600.0 *
                         (1 + 2048.0 / (6 * 25600) + 51200.0 / (16 * 128 * 25600.0));
  std::printf("eq. 3, 1T row: %.6g FLOPs per iteration (by hand %.6g), %.3f s at 502 PFLOP/s\n", flops_1t,
              by_hand, flops_1t / 502e15);
  CHECK(flops_1t == doctest::Approx(by_hand).epsilon(1e-15));
}

TEST_CASE("selene-384node.json: 3,072 A100 on DGX A100 nodes at NCCL's achievable bandwidths") {
  const hetsim::GpuCatalog catalog = hetsim::GpuCatalog::load(kRoot + "/models/gpus");
  const hetsim::Cluster selene =
      hetsim::load_cluster(kRoot + "/topologies/clusters/selene-384node.json", catalog.keys());
  CHECK(selene.gpu_count() == 3072);
  CHECK(selene.node_count() == 384);
  CHECK(selene.gpu(3071).gpu_type == "a100-80gb");
  // NVLink: 230 GB/s, NCCL's 8-GPU ring busbw on A100 (nccl-tests issue 149); HDR adapter:
  // 24 GB/s, NVIDIA's 192 GB/s over eight adapters (nccl issue 812).
  std::printf("selene: NVLink %.0f GB/s per direction, GPU 0 -> GPU 8 bottleneck %.0f GB/s\n",
              selene.intra_node_bandwidth_bytes_per_s(0) / 1e9,
              selene.route_bottleneck_bandwidth_bytes_per_s(0, 8) / 1e9);
  CHECK(selene.intra_node_bandwidth_bytes_per_s(0) == 230e9);
  CHECK(selene.route_bottleneck_bandwidth_bytes_per_s(0, 8) == 24e9);
}

TEST_CASE("validation suite: every paper within the thresholds of tests/validation/thresholds.json") {
  const nlohmann::json thresholds =
      nlohmann::json::parse(std::ifstream(kRoot + "/tests/validation/thresholds.json"));
  const hetsim::validation::SuiteResult result = hetsim::validation::run_suite(kRoot);
  std::printf("%s", hetsim::validation::suite_table(result).c_str());

  REQUIRE(result.cases.size() == hetsim::validation::published_cases().size());
  for (const auto& r : result.cases) {
    CAPTURE(r.case_.row);
    CHECK(std::isfinite(r.simulated));
    CHECK(r.simulated > 0);
  }
  std::set<std::string> papers;
  for (const auto& p : result.papers) {
    CAPTURE(p.paper);
    papers.insert(p.paper);
    REQUIRE(thresholds.at("papers").contains(p.paper));
    const nlohmann::json& limit = thresholds.at("papers").at(p.paper);
    std::printf("%s: mean |error| %.2f%% (threshold %.0f%%), max |error| %.2f%% (threshold %.0f%%)\n",
                p.paper.c_str(), p.mean_abs_error_percent, limit.at("mean_abs_error_percent").get<double>(),
                p.max_abs_error_percent, limit.at("max_abs_error_percent").get<double>());
    CHECK(p.mean_abs_error_percent <= limit.at("mean_abs_error_percent").get<double>());
    CHECK(p.max_abs_error_percent <= limit.at("max_abs_error_percent").get<double>());
  }
  // No threshold for a paper the suite no longer runs.
  for (const auto& [paper, limit] : thresholds.at("papers").items()) {
    const std::string paper_name = paper;
    CAPTURE(paper_name);
    CHECK(papers.count(paper) == 1);
  }
}

TEST_CASE("published runs: every category within the thresholds of tests/validation/thresholds.json") {
  const nlohmann::json thresholds =
      nlohmann::json::parse(std::ifstream(kRoot + "/tests/validation/thresholds.json"));
  const hetsim::validation::PublishedSuiteResult result = hetsim::validation::run_published_suite(kRoot);
  std::printf("%s", hetsim::validation::published_suite_table(result).c_str());
  const nlohmann::json& limits = thresholds.at("categories");
  const auto bound = [](const nlohmann::json& limit, const char* key) {
    return limit.contains(key) ? limit.at(key).get<double>() : 1e300;
  };
  std::set<std::string> categories;
  for (const auto& c : result.categories) {
    CAPTURE(c.category);
    categories.insert(c.category);
    REQUIRE(limits.contains(c.category));
    const nlohmann::json& limit = limits.at(c.category);
    std::printf("%s: mean |error| %.2f%% (threshold %.0f%%), max %.2f%% (%.0f%%), max |increase error| %.0f%%, "
                "signed drift %+.1f points\n",
                c.category.c_str(), c.mean_abs_error_percent, bound(limit, "mean_abs_error_percent"),
                c.max_abs_error_percent, bound(limit, "max_abs_error_percent"), c.max_abs_increase_error_percent,
                c.signed_drift_percent);
    CHECK(c.mean_abs_error_percent <= bound(limit, "mean_abs_error_percent"));
    CHECK(c.max_abs_error_percent <= bound(limit, "max_abs_error_percent"));
    CHECK(c.max_abs_increase_error_percent <= bound(limit, "max_abs_increase_error_percent"));
    CHECK(std::fabs(c.signed_drift_percent) <= bound(limit, "max_signed_drift_percent"));
    CHECK(static_cast<double>(c.misranked_groups.size()) <= (limit.contains("max_misranked_groups") ? bound(limit, "max_misranked_groups") : 0.0));
  }
  for (const auto& [category, limit] : limits.items()) {
    const std::string category_name = category;
    CAPTURE(category_name);
    CHECK(categories.count(category) == 1);
  }
}

TEST_CASE("published runs: a mapping naming no published case is an error naming the file and path") {
  namespace fs = std::filesystem;
  const std::string dir = "/tmp/hetsim_published_suite_bad";
  fs::remove_all(dir);
  fs::create_directories(dir + "/tests/validation");
  fs::create_directories(dir + "/tests/data/published-runs");
  fs::create_directories(dir + "/models");
  fs::copy(kRoot + "/models/gpus", dir + "/models/gpus");
  fs::copy_file(kRoot + "/tests/data/published-runs/training-runs.json",
                dir + "/tests/data/published-runs/training-runs.json");
  std::ofstream(dir + "/tests/validation/published_runs.json")
      << R"({"cases": [{"id": "DTFM-XL12-PP3-d11", "metric": "iteration_time_s", "run": {}, "mapping": "x"}],
             "not_expressible": []})";
  std::string message = "(no error)";
  try {
    hetsim::validation::run_published_suite(dir);
  } catch (const hetsim::InputError& e) {
    message = e.what();
  }
  CHECK(message == dir + "/tests/validation/published_runs.json: /cases/0/id: got \"DTFM-XL12-PP3-d11\"; "
                         "expected a case id of tests/data/published-runs/training-runs.json");
}

// The GPU catalog: every shipped file loads; each class of bad input is rejected with a pinned
// message naming the file and JSON path.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <fstream>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"

namespace fs = std::filesystem;

namespace {
const std::string kShipped = std::string(HETSIM_SOURCE_DIR) + "/models/gpus";

// A catalog directory holding one copy of a100-80gb.json edited by `edit`.
std::string catalog_with(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = "/tmp/hetsim_models_gpus_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlohmann::json doc;
  std::ifstream(kShipped + "/a100-80gb.json") >> doc;
  edit(doc);
  std::ofstream(dir + "/bad.json") << doc.dump(2);
  return dir;
}
std::string message_of(const std::string& dir) {
  try {
    hetsim::GpuCatalog::load(dir).check_all();
  } catch (const hetsim::InputError& e) {
    return std::string(e.what()).substr(dir.size() + 1);  // drop the directory for readability
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("the shipped catalog loads every GPU with dense peaks") {
  const auto catalog = hetsim::GpuCatalog::load(kShipped);
  CHECK(catalog.keys() ==
        std::vector<std::string>{"a100-40gb", "a100-80gb", "a30",       "a40",      "b200",
                                 "b300",      "gb200",     "gb300",     "gh200",    "h100-nvl",
                                 "h100-pcie", "h100-sxm",  "h200",      "h800-sxm", "l4",
                                 "l40s",      "mi250x",    "mi300x",    "mi325x",   "rtx-2080-ti",
                                 "rtx-3090",  "rtx-4090",  "rtx-a6000", "t4",       "titan-rtx",
                                 "v100-16gb", "v100-32gb"});
  CHECK_NOTHROW(catalog.check_all());  // every shipped file reads, not only those looked up below
  const auto& h100 = catalog.at("h100-sxm");
  CHECK(h100.peak(hetsim::Dtype::kBf16) == 989.4e12);  // dense: half the 1979 TFLOPS sparsity figure
  CHECK(h100.hbm_bytes_per_s == 3350e9);
  CHECK(catalog.at("a100-80gb").peak(hetsim::Dtype::kFp8) == 0.0);
  CHECK(catalog.at("a100-80gb").efficiency.gemm_compute.max_efficiency < 1.0);
}

TEST_CASE("a GPU file is read when its type is first looked up, and its errors come then") {
  // A run pays for the GPU types it uses: before, every file was parsed at load, most of the
  // default run's time once the catalog held 27 types.
  const std::string dir = catalog_with("lazy", [](auto& d) { d["hbm_GBps"] = 0; });
  std::filesystem::copy_file(kShipped + "/h100-sxm.json", dir + "/h100-sxm.json");
  const auto catalog = hetsim::GpuCatalog::load(dir);
  CHECK(catalog.keys() == std::vector<std::string>{"bad", "h100-sxm"});
  CHECK(catalog.at("h100-sxm").hbm_bytes_per_s == 3350e9);
  CHECK(&catalog.at("h100-sxm") == &catalog.at("h100-sxm"));  // read once
  CHECK_THROWS_WITH_AS(catalog.at("bad"), (dir + "/bad.json: /hbm_GBps: got 0; expected a number > 0").c_str(),
                       hetsim::InputError);
  CHECK_THROWS_AS(catalog.check_all(), hetsim::InputError);
}

TEST_CASE("an unknown GPU key suggests the nearest one") {
  const auto catalog = hetsim::GpuCatalog::load(kShipped);
  try {
    catalog.at("h100-sxn");
    FAIL("no error");
  } catch (const hetsim::InputError& e) {
    CHECK(std::string(e.what()) ==
          "GPU catalog: (document): got unknown GPU type \"h100-sxn\"; expected a GPU type in the "
          "catalog; did you mean \"h100-sxm\"?");
  }
}

TEST_CASE("bad GPU files: unknown key, missing field, wrong type, non-positive value, missing source") {
  CHECK(message_of(catalog_with("unknown", [](auto& d) { d["hbm_GBs"] = 1; })) ==
        "bad.json: /hbm_GBs: got unknown key \"hbm_GBs\"; expected a known key; did you mean \"hbm_GBps\"?");
  CHECK(message_of(catalog_with("missing", [](auto& d) { d.erase("max_power_W"); })) ==
        "bad.json: /max_power_W: got nothing (missing); expected a value for required member \"max_power_W\"");
  CHECK(message_of(catalog_with("type", [](auto& d) { d["peak_tflops"]["bf16"] = "312"; })) ==
        "bad.json: /peak_tflops/bf16: got \"312\"; expected a number");
  CHECK(message_of(catalog_with("zero", [](auto& d) { d["hbm_GBps"] = 0; })) ==
        "bad.json: /hbm_GBps: got 0; expected a number > 0");
  CHECK(message_of(catalog_with("negative", [](auto& d) { d["peak_tflops"]["fp8"] = -1; })) ==
        "bad.json: /peak_tflops/fp8: got -1; expected a number >= 0");
  CHECK(message_of(catalog_with("source", [](auto& d) { d["sources"]["hbm_GBps"] = ""; })) ==
        "bad.json: /sources/hbm_GBps: got \"\"; expected a non-empty source string");
  CHECK(message_of(catalog_with("eff", [](auto& d) { d["efficiency"]["norm"]["max_efficiency"] = 1.5; })) ==
        "bad.json: /efficiency/norm/max_efficiency: got 1.5; expected a fraction in (0, 1]");
  CHECK(message_of(catalog_with("ridge", [](auto& d) { d["efficiency"]["gemm_ridge_exponent"] = 0.5; })) ==
        "bad.json: /efficiency/gemm_ridge_exponent: got 0.5; expected a number >= 1");
  CHECK(message_of(catalog_with("ridge_missing", [](auto& d) { d["efficiency"].erase("gemm_ridge_exponent"); })) ==
        "bad.json: /efficiency/gemm_ridge_exponent: got nothing (missing); expected a value for required member "
        "\"gemm_ridge_exponent\"");
  CHECK(message_of(catalog_with("score", [](auto& d) { d["efficiency"].erase("score_elementwise"); })) ==
        "bad.json: /efficiency/score_elementwise: got nothing (missing); expected a value for required member "
        "\"score_elementwise\"");
  CHECK(message_of(catalog_with("idle", [](auto& d) { d["idle_power_W"] = 500; })) ==
        "bad.json: /idle_power_W: got 500; expected a number below max_power_W");
}

TEST_CASE("the added GPUs: dense peaks, memory, links and prices as their sources state") {
  using hetsim::Dtype;
  const auto catalog = hetsim::GpuCatalog::load(kShipped);
  // V100 SXM2 16GB: fp16 tensor cores only (125 TFLOP/s, no sparsity on Volta), 16 GiB HBM2.
  const auto& v100 = catalog.at("v100-16gb");
  CHECK(v100.peak(Dtype::kFp16) == 125e12);
  CHECK(v100.peak(Dtype::kBf16) == 0.0);
  CHECK(v100.peak(Dtype::kFp8) == 0.0);
  CHECK(v100.hbm_bytes == 16.0 * (1ull << 30));
  CHECK(v100.usd_per_hour == 3.06);  // AWS p3.16xlarge $24.48 / 8
  // H800: the H100 SXM5's compute and memory, NVLink cut to 400 GB/s both directions.
  const auto& h800 = catalog.at("h800-sxm");
  const auto& h100 = catalog.at("h100-sxm");
  CHECK(h800.peak_flops == h100.peak_flops);
  CHECK(h800.hbm_bytes == h100.hbm_bytes);
  CHECK(h800.nvlink_bytes_per_s == 200e9);
  // GH200: the H100-class GPU with 96 GB HBM3 at 4 TB/s; host link NVLink-C2C, 450 GB/s a way.
  const auto& gh200 = catalog.at("gh200");
  CHECK(gh200.peak(Dtype::kBf16) == 989.4e12);
  CHECK(gh200.peak(Dtype::kFp8) == 1978.9e12);
  CHECK(gh200.hbm_bytes_per_s == 4000e9);
  CHECK(gh200.pcie_bytes_per_s == 450e9);
  // B200 (HGX): half of NVIDIA's sparse 4.5 PFLOPS BF16 and 9 PFLOPS FP8; 7.7 TB/s; 1000 W.
  const auto& b200 = catalog.at("b200");
  CHECK(b200.peak(Dtype::kBf16) == 2250e12);
  CHECK(b200.peak(Dtype::kFp8) == 4500e12);
  CHECK(b200.hbm_bytes_per_s == 7700e9);
  CHECK(b200.nvlink_bytes_per_s == 900e9);
  CHECK(b200.max_power_w == 1000);
  // MI300X: dense 1307.4 TFLOP/s BF16/FP16, 2614.9 FP8; 192 GiB at 5.3 TB/s; 7 x 64 GB/s xGMI.
  const auto& mi300x = catalog.at("mi300x");
  CHECK(mi300x.peak(Dtype::kBf16) == 1307.4e12);
  CHECK(mi300x.peak(Dtype::kFp8) == 2614.9e12);
  CHECK(mi300x.hbm_bytes == 192.0 * (1ull << 30));
  CHECK(mi300x.nvlink_bytes_per_s == 448e9);
  CHECK(mi300x.max_power_w == 750);
}

TEST_CASE("every catalog GPU trains in bf16 or fp16, and no dense peak is a sparsity figure") {
  // A dense FP8 peak is twice the dense BF16 one on every part with FP8 (Hopper, Blackwell,
  // CDNA 3, Ada; the L40S's published 733 against 2 x 362.05 is the largest rounding, 1.2%); a
  // sparsity figure slipped in would double one of them.
  using hetsim::Dtype;
  const auto catalog = hetsim::GpuCatalog::load(kShipped);
  for (const auto& key : catalog.keys()) {
    CAPTURE(key);
    const auto& gpu = catalog.at(key);
    CHECK(std::max(gpu.peak(Dtype::kBf16), gpu.peak(Dtype::kFp16)) > 0);
    if (gpu.peak(Dtype::kFp8) > 0 && gpu.peak(Dtype::kBf16) > 0)
      CHECK(gpu.peak(Dtype::kFp8) == doctest::Approx(2 * gpu.peak(Dtype::kBf16)).epsilon(0.02));
  }
}

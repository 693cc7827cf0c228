// The GPU catalog: every shipped file loads; each class of bad input is rejected with a pinned
// message naming the file and JSON path.
#include <doctest/doctest.h>

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
    hetsim::GpuCatalog::load(dir);
  } catch (const hetsim::InputError& e) {
    return std::string(e.what()).substr(dir.size() + 1);  // drop the directory for readability
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("the shipped catalog loads every GPU with dense peaks") {
  const auto catalog = hetsim::GpuCatalog::load(kShipped);
  CHECK(catalog.keys() == std::vector<std::string>{"a100-40gb", "a100-80gb", "a40", "h100-sxm", "h200",
                                                   "l40s", "rtx-4090", "v100-32gb"});
  const auto& h100 = catalog.at("h100-sxm");
  CHECK(h100.peak(hetsim::Dtype::kBf16) == 989.4e12);  // dense: half the 1979 TFLOPS sparsity figure
  CHECK(h100.hbm_bytes_per_s == 3350e9);
  CHECK(catalog.at("a100-80gb").peak(hetsim::Dtype::kFp8) == 0.0);
  CHECK(catalog.at("a100-80gb").efficiency.gemm_compute.max_efficiency < 1.0);
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
  CHECK(message_of(catalog_with("idle", [](auto& d) { d["idle_power_W"] = 500; })) ==
        "bad.json: /idle_power_W: got 500; expected a number below max_power_W");
}

// Loading of the GPU catalog (models/gpus/*.json); the format is documented in models/README.md.
#include "models/gpu_catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "base/error.hpp"
#include "base/json_input.hpp"
#include "base/units.hpp"

namespace hetsim {

namespace {

constexpr std::array<const char*, kDtypeCount> kDtypeNames = {"fp32", "tf32", "bf16", "fp16", "fp8"};

// Figures that must each carry a source string under "sources".
constexpr std::array<const char*, 9> kSourcedFigures = {
    "peak_tflops", "hbm_GiB",      "hbm_GBps",     "nvlink_GBps", "pcie_GBps",
    "idle_power_W", "max_power_W", "usd_per_hour", "efficiency"};

EfficiencyCurve read_curve(const JsonInput& curve) {
  curve.reject_unknown_keys({"max_efficiency", "overhead_us"});
  EfficiencyCurve out;
  out.max_efficiency = curve.positive("max_efficiency");
  if (out.max_efficiency > 1.0) curve.at("max_efficiency").fail("a fraction in (0, 1]");
  out.overhead_s = curve.non_negative("overhead_us") * units::kMicrosecond;
  return out;
}

RooflineEfficiency read_efficiency(const JsonInput& root) {
  const JsonInput eff = root.at("efficiency");
  eff.reject_unknown_keys(
      {"gemm_compute", "gemm_memory", "gemm_ridge_exponent", "elementwise", "norm", "score_elementwise"});
  RooflineEfficiency out;
  out.gemm_compute = read_curve(eff.at("gemm_compute"));
  out.gemm_memory = read_curve(eff.at("gemm_memory"));
  out.gemm_ridge_exponent = eff.positive("gemm_ridge_exponent");
  if (out.gemm_ridge_exponent < 1.0) eff.at("gemm_ridge_exponent").fail("a number >= 1");
  out.elementwise = read_curve(eff.at("elementwise"));
  out.norm = read_curve(eff.at("norm"));
  out.score_elementwise = read_curve(eff.at("score_elementwise"));
  out.source = root.string("efficiency_source");
  if (out.source.empty()) root.at("efficiency_source").fail("a non-empty description of the fit");
  return out;
}

void check_sources(const JsonInput& root) {
  const JsonInput sources = root.at("sources");
  sources.reject_unknown_keys({"peak_tflops", "hbm_GiB", "hbm_GBps", "nvlink_GBps", "pcie_GBps",
                               "idle_power_W", "max_power_W", "usd_per_hour", "efficiency"});
  for (const char* figure : kSourcedFigures) {
    if (sources.string(figure).empty()) sources.at(figure).fail("a non-empty source string");
  }
}

GpuSpec read_gpu(const std::string& path) {
  const nlohmann::json doc = read_json_file(path);
  const JsonInput root(doc, path);
  root.reject_unknown_keys({"display_name", "peak_tflops", "hbm_GiB", "hbm_GBps", "nvlink_GBps",
                            "pcie_GBps", "idle_power_W", "max_power_W", "usd_per_hour",
                            "efficiency", "efficiency_source", "sources"});
  GpuSpec gpu;
  gpu.key = std::filesystem::path(path).stem().string();
  gpu.display_name = root.string("display_name");

  const JsonInput peaks = root.at("peak_tflops");
  peaks.reject_unknown_keys({"fp32", "tf32", "bf16", "fp16", "fp8"});
  for (int d = 0; d < kDtypeCount; ++d) {
    // 0 marks a dtype the tensor cores do not support; fp32 runs on every GPU.
    const double tflops = d == static_cast<int>(Dtype::kFp32) ? peaks.positive(kDtypeNames[d])
                                                               : peaks.non_negative(kDtypeNames[d]);
    gpu.peak_flops[d] = tflops * units::kTera;
  }
  gpu.hbm_bytes = root.positive("hbm_GiB") * units::kGiB;
  gpu.hbm_bytes_per_s = units::gbyte_per_s_to_bytes(root.positive("hbm_GBps"));
  gpu.nvlink_bytes_per_s = units::gbyte_per_s_to_bytes(root.non_negative("nvlink_GBps"));
  gpu.pcie_bytes_per_s = units::gbyte_per_s_to_bytes(root.positive("pcie_GBps"));
  gpu.idle_power_w = root.positive("idle_power_W");
  gpu.max_power_w = root.positive("max_power_W");
  if (gpu.idle_power_w >= gpu.max_power_w) {
    root.at("idle_power_W").fail("a number below max_power_W");
  }
  gpu.usd_per_hour = root.positive("usd_per_hour");
  gpu.efficiency = read_efficiency(root);
  check_sources(root);
  return gpu;
}

}  // namespace

const char* to_string(Dtype d) { return kDtypeNames[static_cast<int>(d)]; }

Dtype dtype_from_string(const std::string& text) {
  for (int d = 0; d < kDtypeCount; ++d) {
    if (text == kDtypeNames[d]) return static_cast<Dtype>(d);
  }
  throw Error("unknown dtype \"" + text + "\"; expected one of fp32, tf32, bf16, fp16, fp8");
}

GpuCatalog GpuCatalog::load(const std::string& directory) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(directory)) {
    throw InputError(directory, "", "no such directory", "a directory of GPU JSON files");
  }
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());  // directory order is unspecified; keep loads stable
  if (paths.empty()) {
    throw InputError(directory, "", "no *.json files", "at least one GPU JSON file");
  }
  GpuCatalog catalog;
  for (const auto& path : paths) catalog.specs_.push_back(read_gpu(path));
  std::sort(catalog.specs_.begin(), catalog.specs_.end(),
            [](const GpuSpec& a, const GpuSpec& b) { return a.key < b.key; });
  return catalog;
}

const GpuSpec& GpuCatalog::at(const std::string& key) const {
  const auto it = std::lower_bound(specs_.begin(), specs_.end(), key,
                                   [](const GpuSpec& s, const std::string& k) { return s.key < k; });
  if (it != specs_.end() && it->key == key) return *it;
  const std::vector<std::string> known = keys();
  const std::string nearest = nearest_word(key, known);
  std::string expected = "a GPU type in the catalog";
  if (!nearest.empty()) {
    expected += "; did you mean \"" + nearest + "\"?";
  } else {
    expected += " (";
    for (std::size_t i = 0; i < known.size(); ++i) expected += (i ? ", " : "") + known[i];
    expected += ")";
  }
  throw InputError("GPU catalog", "", "unknown GPU type \"" + key + "\"", expected);
}

std::vector<std::string> GpuCatalog::keys() const {
  std::vector<std::string> out;
  out.reserve(specs_.size());
  for (const auto& s : specs_) out.push_back(s.key);
  return out;
}

}  // namespace hetsim

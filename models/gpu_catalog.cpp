// Loading of the GPU catalog (models/gpus/*.json); the format is documented in models/README.md.
#include "models/gpu_catalog.hpp"

#include <algorithm>
#include <filesystem>
#include <mutex>

#include <nlohmann/json.hpp>

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

// The keys of a GPU file, and of a cluster file's GPU type (with_types).
void reject_unknown_gpu_keys(const JsonInput& in) {
  in.reject_unknown_keys({"display_name", "peak_tflops", "hbm_GiB", "hbm_GBps", "nvlink_GBps",
                          "pcie_GBps", "idle_power_W", "max_power_W", "usd_per_hour", "efficiency",
                          "efficiency_source", "sources"});
}

GpuSpec read_gpu_document(const JsonInput& root, const std::string& key);

GpuSpec read_gpu(const std::string& path) {
  const nlohmann::json doc = read_json_file(path);
  return read_gpu_document(JsonInput(doc, path), std::filesystem::path(path).stem().string());
}

GpuSpec read_gpu_document(const JsonInput& root, const std::string& key) {
  reject_unknown_gpu_keys(root);
  GpuSpec gpu;
  gpu.key = key;
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

struct GpuCatalog::Files {
  std::vector<std::string> keys;   // sorted
  std::vector<std::string> paths;  // by key
  std::mutex mutex;                // guards specs
  std::vector<std::unique_ptr<GpuSpec>> specs;  // by key; null until read
};

std::optional<std::size_t> GpuCatalog::file_index(const std::string& key) const {
  const std::vector<std::string>& files = files_->keys;
  const auto it = std::lower_bound(files.begin(), files.end(), key);
  if (it == files.end() || *it != key) return std::nullopt;
  return static_cast<std::size_t>(it - files.begin());
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
  if (paths.empty()) {
    throw InputError(directory, "", "no *.json files", "at least one GPU JSON file");
  }
  // Directory order is unspecified: keys sorted, so that lookups and listings are stable.
  const auto stem = [](const std::string& path) { return fs::path(path).stem().string(); };
  std::sort(paths.begin(), paths.end(),
            [&](const std::string& a, const std::string& b) { return stem(a) < stem(b); });
  GpuCatalog catalog;
  catalog.files_ = std::make_shared<Files>();
  for (const std::string& path : paths) catalog.files_->keys.push_back(stem(path));
  catalog.files_->paths = std::move(paths);
  catalog.files_->specs.resize(catalog.files_->keys.size());
  return catalog;
}

void GpuCatalog::check_all() const {
  for (const std::string& key : files_->keys) at(key);
}

const GpuSpec& GpuCatalog::at(const std::string& key) const {
  const auto own = std::lower_bound(defined_.begin(), defined_.end(), key,
                                    [](const GpuSpec& s, const std::string& k) { return s.key < k; });
  if (own != defined_.end() && own->key == key) return *own;
  if (const std::optional<std::size_t> index = file_index(key)) {
    const std::lock_guard<std::mutex> lock(files_->mutex);
    std::unique_ptr<GpuSpec>& spec = files_->specs[*index];
    if (!spec) spec = std::make_unique<GpuSpec>(read_gpu(files_->paths[*index]));
    return *spec;
  }
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
  std::vector<std::string> out = files_->keys;
  for (const GpuSpec& spec : defined_) out.push_back(spec.key);
  std::sort(out.begin(), out.end());
  return out;
}

GpuCatalog GpuCatalog::with_types(const nlohmann::json& types, const std::string& file,
                                  const std::string& json_path) const {
  GpuCatalog out = *this;
  const JsonInput in(types, file, json_path);
  if (!types.is_object()) in.fail("an object of GPU type names to their figures");
  for (const auto& [key, entry] : types.items()) {
    const JsonInput e = in.at(key);
    // A bad name is reported as the name, not as the entry's figures.
    const std::string name = nlohmann::json(key).dump();
    if (key.empty() || key.find('/') != std::string::npos)
      throw InputError(file, e.path(), name, "a GPU type name: not empty, no \"/\"");
    if (file_index(key))
      throw InputError(file, e.path(), name,
                       "a name the catalog does not hold (to change the catalog's " + name +
                           ", name a new type with \"base\": " + name + ")");
    if (!entry.is_object()) e.fail("an object: a GPU file's fields, or \"base\" and the figures it changes");
    if (!entry.contains("base")) {
      out.defined_.push_back(read_gpu_document(e, key));
      continue;
    }
    // A derived type: the base's file with the entry's fields laid over it (merged inside
    // peak_tflops, efficiency and sources), every changed figure with a source of its own.
    const std::string base = e.string("base");
    const std::optional<std::size_t> index = file_index(base);
    if (!index) {
      const std::string near = nearest_word(base, files_->keys);
      e.at("base").fail("a GPU type of the catalog (models/gpus)" +
                        (near.empty() ? std::string() : "; did you mean \"" + near + "\"?"));
    }
    nlohmann::json merged = read_json_file(files_->paths[*index]);
    nlohmann::json changes = entry;
    changes.erase("base");
    reject_unknown_gpu_keys(JsonInput(changes, file, e.path()));
    for (const char* figure : kSourcedFigures) {
      if (!changes.contains(figure)) continue;
      const bool sourced = changes.contains("sources") && changes["sources"].is_object() &&
                           changes["sources"].contains(figure);
      if (!sourced)
        throw InputError(file, e.path() + "/sources/" + figure, "nothing (missing)",
                         std::string("a source for the changed figure \"") + figure + "\"");
    }
    merged.merge_patch(changes);
    out.defined_.push_back(read_gpu_document(JsonInput(merged, file, e.path()), key));
  }
  std::sort(out.defined_.begin(), out.defined_.end(),
            [](const GpuSpec& a, const GpuSpec& b) { return a.key < b.key; });
  return out;
}

}  // namespace hetsim

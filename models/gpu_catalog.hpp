#pragma once
// The GPU catalog: one JSON file per GPU type under models/gpus/, every figure with its source
// beside it in the file. Loaded once; looked up by key ("h100-sxm").
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace hetsim {

enum class Dtype { kFp32, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kDtypeCount = 5;
const char* to_string(Dtype d);
Dtype dtype_from_string(const std::string& text);  // throws Error for an unknown name

// One roofline efficiency curve: a kernel class reaches `max_efficiency` of the peak rate on
// large problems and pays `overhead_s` per kernel, so time = work / (rate * max_efficiency) +
// overhead_s. Written as an efficiency by problem size x (FLOPs or bytes) this is
// eff(x) = max_efficiency * x / (x + overhead_s * rate * max_efficiency): the curve rises from 0
// and saturates. Fitted per GPU on measured kernels (models/README.md, "Efficiency fit").
struct EfficiencyCurve {
  double max_efficiency = 1.0;  // fraction of the peak rate, (0, 1]
  double overhead_s = 0.0;      // per kernel, seconds
};

// Efficiency curves by kernel class (see models/roofline.hpp).
struct RooflineEfficiency {
  EfficiencyCurve gemm_compute;  // GEMM FLOPs against peak(dtype)
  EfficiencyCurve gemm_memory;   // GEMM operand bytes (weights dominate) against HBM bandwidth
  // A GEMM whose compute and memory times are alike (near the roofline's ridge) takes longer
  // than the slower of the two, as its phases overlap only in part: time = (t_c^p + t_m^p)^(1/p)
  // with this p >= 1 (1 adds them; infinity, the default, is the plain max of an ideal
  // roofline). See models/roofline.hpp.
  double gemm_ridge_exponent = std::numeric_limits<double>::infinity();
  EfficiencyCurve elementwise;   // residual adds, activation functions, hidden-state dropout
  EfficiencyCurve norm;          // LayerNorm / RMSNorm (row reductions)
  // The unfused attention core's scaled masked softmax and attention dropout over the s x s
  // scores: the widest elementwise kernels of a layer, measured slower than the adds and
  // activations `elementwise` is fitted on.
  EfficiencyCurve score_elementwise;
  std::string source;            // where the parameters come from ("efficiency_source")
};

struct GpuSpec {
  std::string key;                                   // catalog key, file name without .json
  std::string display_name;                          // "NVIDIA H100 SXM5 80GB"
  std::array<double, kDtypeCount> peak_flops{};      // dense FLOP/s by Dtype; 0 = unsupported
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double nvlink_bytes_per_s = 0;                     // per GPU per direction; 0 = no NVLink
  double pcie_bytes_per_s = 0;                       // per direction
  double idle_power_w = 0;
  double max_power_w = 0;                            // board power limit (TDP)
  double usd_per_hour = 0;                           // list price of one GPU-hour
  RooflineEfficiency efficiency;                     // roofline efficiency curves
  double peak(Dtype d) const { return peak_flops[static_cast<int>(d)]; }
  // The dtype a matmul asked for in `d` runs in here: TF32 falls back to plain fp32 on a GPU
  // without TF32 tensor cores (V100, Turing), as cuBLAS does when PyTorch allows TF32 there.
  Dtype matmul_dtype(Dtype d) const {
    return d == Dtype::kTf32 && !(peak(Dtype::kTf32) > 0) ? Dtype::kFp32 : d;
  }
};

class GpuCatalog {
 public:
  // The catalog of every *.json in `directory`, keyed by file name. A file is read on the first
  // lookup of its key, so that a run pays for the GPU types it uses, not for the whole catalog
  // (its parsing was most of a small run's time: BENCHMARKS.md, 2026-12-07). Throws InputError
  // for a missing or empty directory.
  static GpuCatalog load(const std::string& directory);
  // Reads every file now: InputError naming the file and field of the first bad one.
  void check_all() const;
  // Throws InputError (unknown GPU type, nearest known key suggested) for a missing key, or the
  // file's own error. Safe from several threads; the reference lives as long as the catalog.
  const GpuSpec& at(const std::string& key) const;
  std::vector<std::string> keys() const;

  // This catalog with a cluster file's own GPU types (its "gpu_types" object, at `json_path` of
  // `file`): each entry a whole GPU file's fields, or a catalog type named by "base" with some
  // of its figures overridden, every new figure with its source (topologies/README.md). Throws
  // InputError naming the file and JSON path.
  GpuCatalog with_types(const nlohmann::json& types, const std::string& file,
                        const std::string& json_path) const;

 private:
  struct Files;  // paths by key, and each file's spec once read, behind a mutex
  std::optional<std::size_t> file_index(const std::string& key) const;  // into Files, by key
  std::shared_ptr<Files> files_;
  std::vector<GpuSpec> defined_;  // with_types' entries, sorted by key; looked up first
};

}  // namespace hetsim

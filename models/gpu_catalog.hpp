#pragma once
// The GPU catalog: one JSON file per GPU type under models/gpus/, every figure with its source
// beside it in the file. Loaded once; looked up by key ("h100-sxm").
#include <array>
#include <string>
#include <vector>

namespace hetsim {

enum class Dtype { kFp32, kTf32, kBf16, kFp16, kFp8 };
inline constexpr int kDtypeCount = 5;
const char* to_string(Dtype d);
Dtype dtype_from_string(const std::string& text);  // throws Error for an unknown name

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
  double peak(Dtype d) const { return peak_flops[static_cast<int>(d)]; }
};

class GpuCatalog {
 public:
  // Loads every *.json in `directory`. Throws InputError naming the file and field.
  static GpuCatalog load(const std::string& directory);
  // Throws InputError (unknown GPU type, nearest known key suggested) for a missing key.
  const GpuSpec& at(const std::string& key) const;
  std::vector<std::string> keys() const;

 private:
  std::vector<GpuSpec> specs_;  // sorted by key
};

}  // namespace hetsim

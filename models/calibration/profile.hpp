#pragma once
// A calibrated GPU profile: what ops measured on one GPU type cost, fitted from raw measurements
// (kept as a CSV beside the profile JSON). Lookups return an empty optional when the profile lacks
// that op class (or dtype), so the roofline model can fall back.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/calibration/curves.hpp"
#include "models/gpu_catalog.hpp"

namespace hetsim::calibration {

// Where and on what the measurements were taken. Zero / empty = unknown.
struct GpuInfo {
  std::string name;  // as the driver reports it, e.g. "NVIDIA H200"
  int sm_count = 0;
  double sm_clock_mhz = 0;
  double memory_clock_mhz = 0;
  std::string driver_version;
  std::string cuda_version;
  int device_count = 0;
  std::map<std::string, double> peak_flops;  // dense FLOP/s by dtype key ("bf16"), from a datasheet
  double hbm_bytes_per_s = 0;                // datasheet HBM bandwidth
  std::string peaks_source;                  // the datasheet the peaks come from
};

struct GemmPoint {
  double m = 0, n = 0, k = 0, seconds = 0;
};
struct AttentionPoint {
  bool backward = false;
  double batch = 0, heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
  double seconds = 0;
};
// A copy kind or a collective at one rank count: the alpha-beta fit and the points it came from.
// For collectives `rate` is the bus bandwidth as nccl-tests defines it (size * factor / time).
struct TransferFit {
  int ranks = 1;
  AlphaBeta fit;
  std::vector<std::pair<double, double>> bytes_seconds;
};

// Everything a profile holds, as the fit produces it and the JSON stores it.
struct ProfileData {
  GpuInfo gpu;
  // The raw CSVs the profile was fitted from, as paths relative to the profile's directory (a
  // profile refitted from several measurement files names each, in the order they were given).
  std::vector<std::string> raw_measurements;
  std::map<std::string, std::vector<GemmPoint>> gemm;            // by dtype
  std::string attention_method;  // "fused (cuDNN SDPA)" or "unfused (cuBLASLt batched GEMMs + softmax)"
  std::map<std::string, std::vector<AttentionPoint>> attention;  // by dtype
  std::map<std::string, std::vector<std::pair<double, double>>> memory_bound;  // kind -> (bytes, s)
  std::map<std::string, TransferFit> copies;                     // kind -> fit
  std::map<std::string, std::vector<TransferFit>> collectives;   // op -> fits by ranks
  std::optional<double> launch_overhead_s;
};

// nccl-tests' bus-bandwidth factor (PERFORMANCE.md in NVIDIA/nccl-tests): busbw = algbw * factor
// with algbw = size / time. all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n;
// send_recv, broadcast, reduce 1. Empty for an unknown op.
std::optional<double> bus_factor(std::string_view op, int ranks);

// FLOPs of scaled-dot-product attention: forward 2 GEMMs of 2*b*h*s*s*d each (QK^T, PV), halved
// when causal; backward 5 such GEMMs (dV, dP, dQ, dK and the recomputed QK^T), i.e. 2.5x forward.
double attention_flops(bool backward, double batch, double heads, double seq, double head_dim, bool causal);

class Profile {
 public:
  explicit Profile(ProfileData data);
  // Throws InputError naming the file and JSON path of a bad value.
  static Profile load(const std::string& path);
  static Profile from_json(const nlohmann::json& json, const std::string& file_name);
  nlohmann::json to_json() const;
  void save(const std::string& path) const;  // written atomically

  const ProfileData& data() const { return data_; }
  const GpuInfo& gpu() const { return data_.gpu; }

  // C[m,n] = A[m,k] B[k,n]. Along each measured (n, k): piecewise-linear in log m; across (n, k):
  // achieved FLOP/s of the nearest measured shapes, inverse-distance weighted in (log n, log k).
  std::optional<double> gemm_seconds(double m, double n, double k, Dtype dtype) const;
  std::optional<double> gemm_seconds(double m, double n, double k, std::string_view dtype) const;
  // Achieved FLOP/s interpolated in log(seq) for the nearest measured head_dim (same pass, causal).
  std::optional<double> attention_seconds(bool backward, double batch, double heads, double seq,
                                          double head_dim, bool causal, Dtype dtype) const;
  std::optional<double> memory_bound_seconds(std::string_view kind, double bytes) const;
  std::optional<double> copy_seconds(std::string_view kind, double bytes) const;
  // Inside the measured sizes: the measured curve; outside: the alpha-beta fit. Rank counts that
  // were not measured use the bus bandwidth and alpha of the nearest measured counts.
  std::optional<double> collective_seconds(std::string_view op, double bytes, int ranks) const;
  std::optional<double> launch_overhead_seconds() const { return data_.launch_overhead_s; }

 private:
  struct GemmCurve {
    double n = 0, k = 0;
    WorkTimeCurve by_m;
  };
  ProfileData data_;
  std::map<std::string, std::vector<GemmCurve>> gemm_curves_;  // by dtype
  std::map<std::string, WorkTimeCurve> memory_curves_;
};

// The profile key of a Dtype ("bf16", ...).
const char* dtype_key(Dtype d);

}  // namespace hetsim::calibration

// hetsim-calibrate-suite: measures this machine's GPUs and writes a profile JSON plus the raw
// measurements as CSV beside it (PROFILE.json -> PROFILE.raw.csv). Run by `hetsim calibrate`.
//   hetsim-calibrate-suite --out models/profiles/h200.json [--quick]
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "checks.cuh"
#include "models/calibration/fit_profile.hpp"
#include "suite.hpp"

namespace {

using hetsim::calibration::GpuInfo;

// Dense (no sparsity) tensor-core peaks and memory bandwidth from NVIDIA's datasheets, recorded so
// that `calibrate --report` can compare with a roofline. Unknown GPUs get none (give them on the
// command line).
void add_datasheet_peaks(GpuInfo& gpu) {
  struct Peaks {
    const char* name_part;
    double bf16, fp16, tf32, fp8, hbm_GBps;
    const char* source;
  };
  static constexpr Peaks kPeaks[] = {
      {"H200", 989.4, 989.4, 494.7, 1978.9, 4800, "NVIDIA H200 Tensor Core GPU datasheet (SXM)"},
      {"H100", 989.4, 989.4, 494.7, 1978.9, 3350, "NVIDIA H100 Tensor Core GPU datasheet (SXM5)"},
      {"A100", 312, 312, 156, 0, 2039, "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)"},
  };
  for (const Peaks& p : kPeaks) {
    if (gpu.name.find(p.name_part) == std::string::npos) continue;
    gpu.peak_flops = {{"bf16", p.bf16 * 1e12}, {"fp16", p.fp16 * 1e12}, {"tf32", p.tf32 * 1e12}};
    if (p.fp8 > 0) gpu.peak_flops["fp8"] = p.fp8 * 1e12;
    gpu.hbm_bytes_per_s = p.hbm_GBps * 1e9;
    gpu.peaks_source = p.source;
    return;
  }
}

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

int run(int argc, char** argv) {
  std::string out = "profile.json";
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out = argv[++i];
    } else {
      fmt::print(stderr, "usage: hetsim-calibrate-suite [--out PROFILE.json] [--quick]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fmt::print(stderr, "hetsim-calibrate-suite: no CUDA GPU is visible on this machine\n");
    return 3;
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  GpuInfo gpu;
  gpu.name = prop.name;
  gpu.sm_count = prop.multiProcessorCount;
  int clock_khz = 0, memory_clock_khz = 0, driver = 0, runtime = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, 0));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  gpu.sm_clock_mhz = clock_khz / 1000.0;
  gpu.memory_clock_mhz = memory_clock_khz / 1000.0;
  gpu.driver_version = version_text(driver);
  gpu.cuda_version = version_text(runtime);
  gpu.device_count = devices;
  add_datasheet_peaks(gpu);

  hetsim::suite::Options options;
  options.quick = quick;
  options.device_count = devices;
  options.compute_capability = prop.major * 10 + prop.minor;
  fmt::print("{} x {} ({} SMs, sm_{}), driver {}, CUDA {}{}\n", devices, gpu.name, gpu.sm_count,
             options.compute_capability, gpu.driver_version, gpu.cuda_version, quick ? ", quick" : "");

  hetsim::suite::Recorder recorder;
  fmt::print("GEMMs (cuBLASLt)\n");
  hetsim::suite::bench_gemm(options, recorder);
  fmt::print("attention (unfused)\n");
  hetsim::suite::bench_attention(options, recorder);
  fmt::print("memory-bound kernels\n");
  hetsim::suite::bench_memory_bound(options, recorder);
  fmt::print("copies and launch overhead\n");
  hetsim::suite::bench_copies_and_launch(options, recorder);
  fmt::print("collectives (NCCL)\n");
  hetsim::suite::bench_collectives(options, recorder);

  const std::filesystem::path profile_path(out);
  std::filesystem::path raw_path = profile_path;
  raw_path.replace_extension(".raw.csv");
  recorder.write_csv(raw_path.string());
  hetsim::calibration::Profile profile = hetsim::calibration::fit_profile(
      recorder.measurements(), gpu, "unfused (cuBLASLt batched GEMMs + softmax kernel; no cuDNN SDPA)");
  hetsim::calibration::ProfileData data = profile.data();
  data.raw_measurements = {raw_path.filename().string()};
  hetsim::calibration::Profile(std::move(data)).save(out);
  fmt::print("wrote {} and {} ({} measurements)\n", out, raw_path.string(), recorder.measurements().size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "hetsim-calibrate-suite: {}\n", e.what());
    return 1;
  }
}

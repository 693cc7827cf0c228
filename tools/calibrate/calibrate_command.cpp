#include "tools/calibrate/calibrate_command.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "models/calibration/csv_importer.hpp"
#include "models/calibration/fit_profile.hpp"
#include "models/calibration/profile.hpp"
#include "models/calibration/roofline_report.hpp"

namespace hetsim {

namespace {

struct CalibrateOptions {
  std::string out = "models/profiles/local.json";
  bool quick = false;
  std::string report;
  // --refit CSV and --mapping MAPPING, paired in the order given.
  std::vector<std::string> refit;
  std::vector<std::string> mapping;
  std::string gpu_name;
  // The roofline for --report; with --refit, recorded in the profile with their source.
  double peak_tflops = 0;
  std::string peak_dtype = "bf16";
  double hbm_GBps = 0;
  std::string peaks_source;
};

// The directory of the running executable (Linux /proc/self/exe).
std::filesystem::path executable_directory() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::current_path() : self.parent_path();
}

// Single-quotes a path for /bin/sh.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void run_suite(const CalibrateOptions& o) {
  const auto suite = executable_directory() / "hetsim-calibrate-suite";
  if (!std::filesystem::exists(suite)) {
    throw Error(fmt::format("calibrate: no CUDA suite was built ({} is missing; build with nvcc and HETSIM_CUDA=ON)",
                            suite.string()));
  }
  const std::string command = fmt::format("{} --out {}{}", shell_quote(suite.string()), shell_quote(o.out),
                                          o.quick ? " --quick" : "");
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) throw Error("calibrate: the CUDA suite could not be run");
  const int code = WEXITSTATUS(status);
  if (code == 3) throw Error("calibrate: no CUDA GPU is present on this machine");
  if (code != 0) throw Error(fmt::format("calibrate: the CUDA suite failed (exit code {}); see its output above", code));
}

void report(const CalibrateOptions& o) {
  const calibration::Profile profile = calibration::Profile::load(o.report);
  calibration::Roofline roofline = calibration::roofline_from_profile(profile);
  if (o.peak_tflops > 0) {
    roofline.peak_flops[o.peak_dtype] = o.peak_tflops * 1e12;
    roofline.source = "command line";
  }
  if (o.hbm_GBps > 0) roofline.memory_bytes_per_s = o.hbm_GBps * 1e9;
  if (roofline.peak_flops.empty() || roofline.memory_bytes_per_s <= 0) {
    throw Error(fmt::format("calibrate --report: {} gives no peak FLOP/s or HBM bandwidth; pass --peak-tflops and "
                            "--hbm-gbps",
                            o.report));
  }
  std::cout << calibration::roofline_report(profile, roofline);
}

// `csv` as a path relative to the directory `profile` is written to (both taken from the working
// directory), so the profile names its raw measurements wherever the pair is moved together.
std::string relative_to_profile(const std::string& csv, const std::string& profile) {
  const auto directory = std::filesystem::absolute(profile).lexically_normal().parent_path();
  return std::filesystem::absolute(csv).lexically_normal().lexically_relative(directory).generic_string();
}

// The profile key of --peak-dtype; InputError naming the flag for an unknown dtype.
std::string peak_dtype_key(const std::string& text) {
  for (const Dtype d : {Dtype::kFp32, Dtype::kTf32, Dtype::kBf16, Dtype::kFp16, Dtype::kFp8}) {
    if (text == calibration::dtype_key(d)) return text;
  }
  throw InputError("command line", "--peak-dtype", text, "fp32, tf32, bf16, fp16 or fp8");
}

void refit(const CalibrateOptions& o) {
  if (o.mapping.empty()) throw Error("calibrate --refit needs --mapping (e.g. models/calibration/mappings/hetsim_raw.json)");
  if (o.refit.size() != o.mapping.size()) {
    throw Error(fmt::format("calibrate: {} --refit file(s) but {} --mapping file(s); give one --mapping per --refit, "
                            "paired in order",
                            o.refit.size(), o.mapping.size()));
  }
  std::vector<calibration::Measurement> measurements;
  std::vector<std::string> sources;
  for (std::size_t i = 0; i < o.refit.size(); ++i) {
    const auto file = calibration::import_csv(o.refit[i], o.mapping[i]);
    measurements.insert(measurements.end(), file.begin(), file.end());
    sources.push_back(relative_to_profile(o.refit[i], o.out));
  }
  calibration::GpuInfo gpu;
  gpu.name = o.gpu_name.empty() ? std::filesystem::path(o.refit.front()).stem().string() : o.gpu_name;
  if ((o.peak_tflops > 0 || o.hbm_GBps > 0) && o.peaks_source.empty()) {
    throw Error("calibrate --refit: --peak-tflops and --hbm-gbps are recorded in the profile only with "
                "--peaks-source (the datasheet they come from)");
  }
  if (o.peak_tflops > 0) gpu.peak_flops[peak_dtype_key(o.peak_dtype)] = o.peak_tflops * 1e12;
  if (o.hbm_GBps > 0) gpu.hbm_bytes_per_s = o.hbm_GBps * 1e9;
  gpu.peaks_source = o.peaks_source;
  calibration::ProfileData data = calibration::fit_profile(measurements, gpu).data();
  data.raw_measurements = std::move(sources);
  calibration::Profile(std::move(data)).save(o.out);
  std::cout << fmt::format("wrote {} from {} measurements in {} file(s)\n", o.out, measurements.size(), o.refit.size());
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Measure this machine's GPUs into a profile (needs a GPU), "
                                                  "refit one from raw CSV, or compare one with a roofline");
  cmd->footer(
      "Examples:\n"
      "  hetsim calibrate --out models/profiles/h200.json --quick\n"
      "  hetsim calibrate --report models/profiles/h200.json\n"
      "  hetsim calibrate --refit my_timings.csv --mapping my_mapping.json --out models/profiles/mine.json\n"
      "  hetsim calibrate --refit gemms.csv --mapping gemm_mapping.json --refit nccl.csv --mapping nccl_mapping.json \\\n"
      "      --gpu-name \"NVIDIA A100-SXM4-80GB\" --out models/profiles/mine.json");
  cmd->add_option("--out", options->out, "Profile JSON to write (raw CSV goes beside it)");
  cmd->add_flag("--quick", options->quick, "Fewer shapes and repetitions (under 3 minutes on one GPU)");
  cmd->add_option("--report", options->report, "Print PROFILE op by op beside a plain roofline");
  cmd->add_option("--refit", options->refit,
                  "Fit a profile from a CSV of measurements (with --mapping); repeat to fit several files into one");
  cmd->add_option("--mapping", options->mapping, "Column mapping JSON for --refit (one per --refit, in order)");
  cmd->add_option("--gpu-name", options->gpu_name,
                  "GPU the --refit measurements were taken on, as the driver names it (default: the first CSV's name)");
  cmd->add_option("--peak-tflops", options->peak_tflops,
                  "Roofline peak for --report, TFLOP/s (dense); with --refit, recorded in the profile");
  cmd->add_option("--peak-dtype", options->peak_dtype, "Dtype the --peak-tflops figure is for (default bf16)");
  cmd->add_option("--hbm-gbps", options->hbm_GBps,
                  "Roofline memory bandwidth for --report, GB/s; with --refit, recorded in the profile");
  cmd->add_option("--peaks-source", options->peaks_source,
                  "With --refit: the datasheet --peak-tflops and --hbm-gbps come from (recorded in the profile)");
  cmd->callback([options] {
    if (!options->report.empty()) {
      report(*options);
    } else if (!options->refit.empty() || !options->mapping.empty()) {
      refit(*options);
    } else {
      run_suite(*options);
    }
  });
}

}  // namespace hetsim

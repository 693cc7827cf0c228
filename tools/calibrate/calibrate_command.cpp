#include "tools/calibrate/calibrate_command.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "base/error.hpp"
#include "models/calibration/csv_importer.hpp"
#include "models/calibration/fit_profile.hpp"
#include "models/calibration/roofline_report.hpp"

namespace hetsim {

namespace {

struct CalibrateOptions {
  std::string out = "models/profiles/local.json";
  bool quick = false;
  std::string report;
  std::string refit;
  std::string mapping;
  double peak_tflops = 0;
  std::string peak_dtype = "bf16";
  double hbm_GBps = 0;
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

void refit(const CalibrateOptions& o) {
  if (o.mapping.empty()) throw Error("calibrate --refit needs --mapping (e.g. models/calibration/mappings/hetsim_raw.json)");
  const auto measurements = calibration::import_csv(o.refit, o.mapping);
  calibration::GpuInfo gpu;
  gpu.name = std::filesystem::path(o.refit).stem().string();
  calibration::ProfileData data = calibration::fit_profile(measurements, gpu).data();
  data.raw_measurements = std::filesystem::path(o.refit).filename().string();
  calibration::Profile(std::move(data)).save(o.out);
  std::cout << fmt::format("wrote {} from {} measurements\n", o.out, measurements.size());
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
      "  hetsim calibrate --refit my_timings.csv --mapping my_mapping.json --out models/profiles/mine.json");
  cmd->add_option("--out", options->out, "Profile JSON to write (raw CSV goes beside it)");
  cmd->add_flag("--quick", options->quick, "Fewer shapes and repetitions (under 3 minutes on one GPU)");
  cmd->add_option("--report", options->report, "Print PROFILE op by op beside a plain roofline");
  cmd->add_option("--refit", options->refit, "Fit a profile from a CSV of measurements (with --mapping)");
  cmd->add_option("--mapping", options->mapping, "Column mapping JSON for --refit");
  cmd->add_option("--peak-tflops", options->peak_tflops, "Roofline peak for --report, TFLOP/s (dense)");
  cmd->add_option("--peak-dtype", options->peak_dtype, "Dtype the --peak-tflops figure is for (default bf16)");
  cmd->add_option("--hbm-gbps", options->hbm_GBps, "Roofline memory bandwidth for --report, GB/s");
  cmd->callback([options] {
    if (!options->report.empty()) {
      report(*options);
    } else if (!options->refit.empty()) {
      refit(*options);
    } else {
      run_suite(*options);
    }
  });
}

}  // namespace hetsim

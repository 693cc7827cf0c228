// `calibrate --report`'s header names the GPU with only the machine details the profile records: a
// profile refitted from another profiler's CSV has no SM count, clocks or driver, and used to print
// "(0 SMs, 0 MHz SM clock, driver , CUDA )".
#include <doctest/doctest.h>

#include "models/calibration/roofline_report.hpp"

using namespace hetsim::calibration;

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// NVIDIA A40 datasheet: FP16 Tensor Core 149.7 TFLOPS dense, 696 GB/s.
const Roofline kA40{{{"fp16", 149.7e12}}, 696e9, "NVIDIA A40 datasheet"};

}  // namespace

TEST_CASE("the report header lists the machine details a profile knows, and no empty ones") {
  ProfileData refitted;
  refitted.gpu.name = "NVIDIA A40";
  CHECK(first_line(roofline_report(Profile(refitted), kA40)) == "profile: NVIDIA A40");

  ProfileData measured = refitted;
  measured.gpu.sm_count = 84;
  measured.gpu.sm_clock_mhz = 1740;
  measured.gpu.driver_version = "550.54";
  measured.gpu.cuda_version = "12.4";
  CHECK(first_line(roofline_report(Profile(measured), kA40)) ==
        "profile: NVIDIA A40 (84 SMs, 1740 MHz SM clock, driver 550.54, CUDA 12.4)");
}

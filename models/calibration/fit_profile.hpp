#pragma once
// Raw measurements -> a profile: GEMM and attention tables, memory-bound curves, alpha-beta fits
// for copies and collectives, the launch overhead. Repeated shapes are combined by their median.
#include <vector>

#include "models/calibration/measurement.hpp"
#include "models/calibration/profile.hpp"

namespace hetsim::calibration {

// `gpu` and `attention_method` are copied into the profile. Measurements without a dtype are
// rejected for gemm and attention (Error naming the source line).
Profile fit_profile(const std::vector<Measurement>& measurements, const GpuInfo& gpu,
                    const std::string& attention_method = "");

}  // namespace hetsim::calibration

#pragma once
// `hetsim calibrate --report`: every measured op of a profile beside a plain roofline
// (max(FLOPs / peak, bytes / HBM bandwidth)), with the fraction of the roofline achieved.
#include <string>

#include "models/calibration/evaluation.hpp"
#include "models/calibration/profile.hpp"

namespace hetsim::calibration {

// The roofline from the profile's GPU metadata (datasheet peaks recorded at calibration).
Roofline roofline_from_profile(const Profile& profile);
// A text table, one row per op; copies and collectives list their alpha-beta fits.
std::string roofline_report(const Profile& profile, const Roofline& roofline);

}  // namespace hetsim::calibration

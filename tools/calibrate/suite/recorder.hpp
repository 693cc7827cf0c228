#pragma once
// Collects measurements and writes them as hetsim's raw CSV (mappings/hetsim_raw.json reads it).
#include <string>
#include <vector>

#include "models/calibration/measurement.hpp"

namespace hetsim::suite {

struct Spread {
  double p10_s = 0, p90_s = 0;
  int reps = 0;
};

class Recorder {
 public:
  void add(calibration::Measurement m, const Spread& spread);
  const std::vector<calibration::Measurement>& measurements() const { return measurements_; }
  void write_csv(const std::string& path) const;  // atomically

 private:
  std::vector<calibration::Measurement> measurements_;
  std::vector<Spread> spreads_;
};

}  // namespace hetsim::suite

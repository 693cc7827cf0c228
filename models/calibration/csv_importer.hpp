#pragma once
// Reads any profiler's CSV into Measurements through a column mapping (a JSON file), so users can
// bring their own timings: hetsim's own raw CSV is one mapping (mappings/hetsim_raw.json), vidur's
// operator and collective CSVs are others. The mapping format is documented in README.md.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/calibration/measurement.hpp"

namespace hetsim::calibration {

// Throws InputError naming the mapping file and JSON path for a bad mapping, and the CSV file,
// line and column for a bad cell (not a number, a time <= 0, a shape <= 0, an unknown kind).
std::vector<Measurement> import_csv(const std::string& csv_path, const std::string& mapping_path);
// The same with the mapping already parsed (`mapping_name` is used in messages) and the CSV as text.
std::vector<Measurement> import_csv_text(const std::string& csv_text, const std::string& csv_name,
                                         const nlohmann::json& mapping, const std::string& mapping_name);

}  // namespace hetsim::calibration

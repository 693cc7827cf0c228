#pragma once
// Timetables as JSON (format in schedules/README.md), written and read back losslessly.
#include <nlohmann/json.hpp>
#include <string>

#include "schedules/timetable.hpp"

namespace hetsim {

nlohmann::json timetable_to_json(const Timetable& t);
// Throws InputError naming `file` and the JSON path for malformed input; does not validate
// runnability (call validate()).
Timetable timetable_from_json(const nlohmann::json& j, const std::string& file);
Timetable load_timetable(const std::string& path);

}  // namespace hetsim

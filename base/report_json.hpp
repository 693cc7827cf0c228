#pragma once
// Reports are read by scripts, and JSON has no inf or NaN: nlohmann writes them as null, which a
// reader takes for a missing figure. A report holding one is refused with where it is instead.
#include <nlohmann/json.hpp>
#include <string>

namespace hetsim {

// `report` as text (nlohmann's dump with `indent`). Throws SimulationError naming the JSON
// pointer of the first number that is not finite, or of a null.
std::string dump_report(const nlohmann::json& report, int indent);

}  // namespace hetsim

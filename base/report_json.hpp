#pragma once
// Reports are read by scripts, and JSON has no inf or NaN: nlohmann writes them as null, which a
// reader takes for a missing figure. A report holding one is refused with where it is instead.
#include <nlohmann/json.hpp>
#include <string>

namespace hetsim {

// Throws SimulationError naming the JSON pointer of the first number in `report` that is not
// finite, or of a null.
void require_finite_report(const nlohmann::json& report);

// `report` as text (nlohmann's dump with `indent`), after require_finite_report.
std::string dump_report(const nlohmann::json& report, int indent);

}  // namespace hetsim

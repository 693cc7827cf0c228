// CSV rendering of sweep lines.
#include "tools/sweep/sweep_csv.hpp"

#include <fmt/format.h>

#include <set>

namespace hetsim::sweep {

namespace {

// RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string joined;
    for (const nlohmann::json& item : value)
      joined += (joined.empty() ? "" : ",") + value_text(item);
    return joined;
  }
  return value.dump();
}

// The report figures a row carries, as JSON pointers into the report.
const std::vector<std::pair<std::string, nlohmann::json::json_pointer>>& figures() {
  static const std::vector<std::pair<std::string, nlohmann::json::json_pointer>> list{
      {"iteration_time_s", nlohmann::json::json_pointer("/iteration_time_s")},
      {"tokens_per_s", nlohmann::json::json_pointer("/tokens_per_s")},
      {"mfu", nlohmann::json::json_pointer("/mfu")},
      {"bubble_fraction", nlohmann::json::json_pointer("/bubble_fraction")},
      {"peak_memory_gib", nlohmann::json::json_pointer("/peak_memory_gib/max")},
      {"usd_per_iteration", nlohmann::json::json_pointer("/cost_usd/per_iteration")},
      {"usd_per_million_tokens", nlohmann::json::json_pointer("/cost_usd/per_million_tokens")},
      {"energy_kwh", nlohmann::json::json_pointer("/energy_kwh")}};
  return list;
}

}  // namespace

std::string sweep_csv(const std::vector<nlohmann::json>& lines_by_index) {
  std::set<std::string> keys;
  for (const nlohmann::json& line : lines_by_index)
    for (const auto& [key, unused] : line["point"].items()) keys.insert(key);
  std::string csv = "index";
  for (const std::string& key : keys) csv += "," + field(key);
  csv += ",status";
  for (const auto& [name, unused] : figures()) csv += "," + name;
  csv += ",error\n";
  for (const nlohmann::json& line : lines_by_index) {
    csv += line["index"].dump();
    for (const std::string& key : keys)
      csv += "," + field(line["point"].contains(key) ? value_text(line["point"][key]) : "");
    if (line.contains("error")) {
      csv += ",invalid" + std::string(figures().size(), ',') + "," +
             field(line["error"].get<std::string>()) + "\n";
      continue;
    }
    const nlohmann::json& report = line["report"];
    csv += report["oom"].empty() ? ",ok" : ",out-of-memory";
    for (const auto& [name, pointer] : figures())
      csv += "," + value_text(report.value(pointer, nlohmann::json()));
    csv += ",\n";
  }
  return csv;
}

}  // namespace hetsim::sweep

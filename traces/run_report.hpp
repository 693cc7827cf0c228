#pragma once
// The report of a `hetsim run`: a table for people and JSON for programs. Both carry the same
// figures; wall_s (wall-clock seconds of the simulation) is the only value that changes between
// identical runs.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/training_run.hpp"

namespace hetsim {

struct RunContext {
  std::string cluster_file;
  std::string model_file;
  std::string model_name;
  int gpus = 0;
  double wall_s = 0;
  std::string trace_file;  // empty when no trace was written
  // The model config's fields hetsim does not model, as "key: why" (TransformerConfig::
  // ignored_fields): listed in both reports when there are any.
  std::vector<std::string> ignored_config_fields = {};
};

nlohmann::json run_report_json(const RunResult& result, const RunContext& context);
std::string run_report_table(const RunResult& result, const RunContext& context);

}  // namespace hetsim

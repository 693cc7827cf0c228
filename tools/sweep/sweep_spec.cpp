// Sweep spec reading and point expansion.
#include "tools/sweep/sweep_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "base/error.hpp"
#include "base/json_input.hpp"
#include "tools/sweep/point_job.hpp"

namespace hetsim::sweep {

namespace {

// A job key must be one of job_keys(); the error suggests the nearest.
void check_key(const JsonInput& object, const std::string& key) {
  const std::vector<std::string>& keys = job_keys();
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  const std::string near = nearest_word(key, keys);
  throw InputError(object.file(), object.at(key).path(), "unknown key \"" + key + "\"",
                   near.empty()
                       ? "a long flag name of `hetsim run` without its dashes, or gpu_type, "
                         "wan_bandwidth_Gbps, wan_latency_ms"
                       : "a known key; did you mean \"" + near + "\"?");
}

void check_settings(const JsonInput& settings) {
  if (!settings.value().is_object()) settings.fail("an object of job keys");
  for (const auto& [key, value] : settings.value().items()) {
    check_key(settings, key);
    if (value.is_object() || value.is_null())
      settings.at(key).fail("a string, a number, a boolean or a list");
  }
}

// Checks the axes and returns the number of points their product holds.
std::size_t count_axes_points(const JsonInput& axes) {
  if (!axes.value().is_object() || axes.value().empty())
    axes.fail("an object of key -> list of values");
  std::size_t total = 1;
  for (const auto& [key, values] : axes.value().items()) {
    check_key(axes, key);
    const JsonInput axis = axes.at(key);
    if (!values.is_array() || values.empty()) axis.fail("a non-empty list of values");
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i].is_object() || values[i].is_null())
        axis.at(i).fail("a string, a number, a boolean or a list");
    if (total > kMaxSweepPoints / values.size())
      axes.fail(fmt::format("at most {} points in all", kMaxSweepPoints));
    total *= values.size();
  }
  return total;
}

// Checks the list and returns its length.
std::size_t count_listed_points(const JsonInput& list) {
  if (!list.value().is_array() || list.value().empty())
    list.fail("a non-empty list of point objects");
  if (list.value().size() > kMaxSweepPoints)
    list.fail(fmt::format("at most {} points", kMaxSweepPoints));
  for (std::size_t i = 0; i < list.array_size(); ++i) check_settings(list.at(i));
  return list.value().size();
}

}  // namespace

nlohmann::json SweepSpec::point(std::size_t index) const {
  if (index >= point_count)
    throw std::out_of_range(fmt::format("point {} of a sweep of {}", index, point_count));
  if (!listed_points.is_null()) return listed_points[index];
  // Odometer over the axes in name order, the last one turning fastest.
  nlohmann::json point = nlohmann::json::object();
  std::size_t rest = index;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    point[it.key()] = (*it)[rest % it->size()];
    rest /= it->size();
  }
  return point;
}

void SweepSpec::add_point(nlohmann::json own) {
  if (listed_points.is_null()) listed_points = nlohmann::json::array();
  listed_points.push_back(std::move(own));
  ++point_count;
}

nlohmann::json SweepSpec::job(std::size_t index) const {
  nlohmann::json settings = base;
  const nlohmann::json own = point(index);  // named: items() would outlive a temporary
  for (const auto& [key, value] : own.items()) settings[key] = value;
  return settings;
}

SweepSpec parse_sweep_spec(const nlohmann::json& document, const std::string& file) {
  const JsonInput root(document, file);
  root.reject_unknown_keys({"description", "base", "axes", "points"});
  SweepSpec spec;
  spec.file = file;
  if (root.has("base")) {
    check_settings(root.at("base"));
    spec.base = document.at("base");
  }
  if (root.has("axes") == root.has("points"))
    root.fail("exactly one of \"axes\" (a cartesian product) and \"points\" (a list)");
  if (root.has("axes")) {
    spec.point_count = count_axes_points(root.at("axes"));
    spec.axes = document.at("axes");
  } else {
    spec.point_count = count_listed_points(root.at("points"));
    spec.listed_points = document.at("points");
  }
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  return parse_sweep_spec(read_json_file(path), path);
}

}  // namespace hetsim::sweep

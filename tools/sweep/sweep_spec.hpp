#pragma once
// A sweep spec file: a base job and the points that vary it, either as axes (the cartesian
// product of their values) or as an explicit list. Keys are those of point_job.hpp.
//
//   { "base":   { "model": "models/configs/llama-3-8b.json", "gbs": 64 },
//     "axes":   { "tp": [1, 2, 4, 8], "pp": [1, 2, 4], "schedule": ["1f1b", "zb-h1"] } }
//   { "base": { ... }, "points": [ { "tp": 8, "pp": 1 }, { "tp": 4, "pp": 2 } ] }
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace hetsim::sweep {

// The most points one spec may expand to: each point holds a report line in memory.
inline constexpr std::size_t kMaxSweepPoints = 10'000'000;

struct SweepSpec {
  std::string file;
  nlohmann::json base = nlohmann::json::object();  // key -> value, under every point
  // The points as listed ("points": an array), or the axes whose product they are ("axes": an
  // object of name -> values); the other is null. Axes are expanded one point at a time, so a
  // spec of millions of points costs no more memory than its text.
  nlohmann::json listed_points;
  nlohmann::json axes;
  std::size_t point_count = 0;
  // Point `index`'s own keys, in sweep order. Axes expand in the order of their names (JSON
  // objects are read with sorted keys), the last name varying fastest. Throws std::out_of_range
  // past the last point.
  nlohmann::json point(std::size_t index) const;
  // The base job with the point's keys on top.
  nlohmann::json job(std::size_t index) const;
  // Appends a listed point (a spec built in code, such as a plan search's candidates).
  void add_point(nlohmann::json own);
};

// Reads and checks a spec: unknown keys (with the nearest known one), empty or non-list axes,
// both or neither of axes and points. Throws InputError naming the file and JSON path.
SweepSpec load_sweep_spec(const std::string& path);
SweepSpec parse_sweep_spec(const nlohmann::json& document, const std::string& file);

}  // namespace hetsim::sweep

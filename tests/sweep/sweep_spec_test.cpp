// Sweep specs: expansion of axes into points, explicit point lists, and the errors for bad specs.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "tools/sweep/sweep_spec.hpp"

using hetsim::sweep::parse_sweep_spec;
using nlohmann::json;

namespace {

std::string error_of(const json& document) {
  try {
    parse_sweep_spec(document, "spec.json");
  } catch (const hetsim::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("axes expand to their cartesian product, names in order, the last varying fastest") {
  const auto spec = parse_sweep_spec(
      json::parse(
          R"({"base": {"gbs": 64}, "axes": {"tp": [1, 2], "pp": [1, 2, 4], "schedule": ["1f1b"]}})"),
      "spec.json");
  REQUIRE(spec.point_count == 6);
  // Names sorted: pp, schedule, tp; tp turns fastest.
  CHECK(spec.point(0) == json::parse(R"({"pp": 1, "schedule": "1f1b", "tp": 1})"));
  CHECK(spec.point(1) == json::parse(R"({"pp": 1, "schedule": "1f1b", "tp": 2})"));
  CHECK(spec.point(2) == json::parse(R"({"pp": 2, "schedule": "1f1b", "tp": 1})"));
  CHECK(spec.point(5) == json::parse(R"({"pp": 4, "schedule": "1f1b", "tp": 2})"));
  CHECK(spec.job(5) == json::parse(R"({"gbs": 64, "pp": 4, "schedule": "1f1b", "tp": 2})"));
}

TEST_CASE("a point list is taken as it is; a point's key overrides the base") {
  const auto spec = parse_sweep_spec(
      json::parse(
          R"({"base": {"tp": 4, "gbs": 64}, "points": [{"tp": 8}, {"pp": 2, "gpu_type": "a100-80gb"}]})"),
      "spec.json");
  REQUIRE(spec.point_count == 2);
  CHECK(spec.job(0) == json::parse(R"({"tp": 8, "gbs": 64})"));
  CHECK(spec.job(1) == json::parse(R"({"tp": 4, "gbs": 64, "pp": 2, "gpu_type": "a100-80gb"})"));
}

TEST_CASE("long flag names and their aliases are both keys") {
  CHECK_NOTHROW(parse_sweep_spec(
      json::parse(R"({"axes": {"tensor-model-parallel-size": [1], "tp": [2]}})"), "s"));
  CHECK_NOTHROW(parse_sweep_spec(
      json::parse(R"({"axes": {"wan_bandwidth_Gbps": [10], "wan_latency_ms": [5]}})"), "s"));
}

TEST_CASE("bad specs are refused with the file, the JSON path and what was expected") {
  CHECK(
      error_of(json::parse(R"({"axes": {"tpp": [1]}})")) ==
      "spec.json: /axes/tpp: got unknown key \"tpp\"; expected a known key; did you mean \"tp\"?");
  CHECK(error_of(json::parse(R"({"base": {"seq-lenght": 4096}, "axes": {"tp": [1]}})")) ==
        "spec.json: /base/seq-lenght: got unknown key \"seq-lenght\"; expected a known key; did "
        "you mean "
        "\"seq-length\"?");
  CHECK(error_of(json::parse(R"({"axes": {"tp": []}})")) ==
        "spec.json: /axes/tp: got []; expected a non-empty list of values");
  CHECK(error_of(json::parse(R"({"axes": {"tp": 4}})")) ==
        "spec.json: /axes/tp: got 4; expected a non-empty list of values");
  CHECK(error_of(json::parse(R"({"axes": {"tp": [1, {"a": 1}]}})")) ==
        "spec.json: /axes/tp/1: got {\"a\":1}; expected a string, a number, a boolean or a list");
  CHECK(error_of(json::parse(R"({"base": {"tp": 1}})")) ==
        "spec.json: (document): got {\"base\":{\"tp\":1}}; expected exactly one of \"axes\" (a "
        "cartesian product) and "
        "\"points\" (a list)");
  CHECK(error_of(json::parse(R"({"points": [{"tp": 1}, 3]})")) ==
        "spec.json: /points/1: got 3; expected an object of job keys");
  CHECK(error_of(json::parse(R"({"axis": {"tp": [1]}})")) ==
        "spec.json: /axis: got unknown key \"axis\"; expected a known key; did you mean \"axes\"?");
}

TEST_CASE("a product beyond the point limit is refused before it is expanded") {
  json axes = json::object();
  for (const char* key : {"tp", "pp", "mbs", "gbs", "seq-length"})
    axes[key] = json(std::vector<int>(100, 1));
  const std::string error = error_of(json{{"axes", axes}});
  CHECK(error.find("expected at most 10000000 points in all") != std::string::npos);
}

TEST_CASE("a product of the most points allowed is taken without expanding it") {
  // Seven axes of ten values: 10^7 points from 300 bytes. Expanded up front they took gigabytes.
  json axes = json::object();
  for (const char* key : {"tp", "pp", "mbs", "gbs", "seq-length", "vpp", "ep"}) {
    std::vector<int> values(10);
    std::iota(values.begin(), values.end(), 1);
    axes[key] = values;
  }
  const auto spec = parse_sweep_spec(json{{"axes", axes}}, "spec.json");
  REQUIRE(spec.point_count == 10'000'000);
  // Names sorted: ep, gbs, mbs, pp, seq-length, tp, vpp; vpp turns fastest.
  CHECK(spec.point(123'456) == json::parse(R"({"ep": 1, "gbs": 2, "mbs": 3, "pp": 4,
                                                 "seq-length": 5, "tp": 6, "vpp": 7})"));
  CHECK(spec.point(9'999'999) == json::parse(R"({"ep": 10, "gbs": 10, "mbs": 10, "pp": 10,
                                                 "seq-length": 10, "tp": 10, "vpp": 10})"));
  CHECK_THROWS_AS(spec.point(10'000'000), std::out_of_range);
}

TEST_CASE("the shipped example specs load") {
  for (const char* name : {"llama-3-8b-plans.json", "two-site-wan.json"}) {
    CAPTURE(name);
    const auto spec =
        hetsim::sweep::load_sweep_spec(fmt::format("{}/tools/sweep/examples/{}", HETSIM_SOURCE_DIR, name));
    CHECK(spec.point_count >= 24);
  }
}

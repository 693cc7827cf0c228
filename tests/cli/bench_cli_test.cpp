// `hetsim bench --json`: every scenario asked for is reported with finite, positive figures (no
// timing thresholds: wall time depends on the machine), and a bad --scenario or --repeats is one
// error line naming the flag, the value and what is accepted.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using hetsim::test::shell;
using hetsim::test::slurp;

const std::string kHetsim = HETSIM_BINARY;

struct Scratch {
  Scratch() {
    path = fs::temp_directory_path() / ("hetsim-bench-cli-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~Scratch() { fs::remove_all(path); }
  std::string at(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

}  // namespace

TEST_CASE("hetsim bench --json reports each scenario's events, times, memory and bare-loop ratio") {
  const Scratch scratch;
  // The smallest scenario keeps the test quick under the sanitizers; the others run the same
  // measurement around a bigger replay or a flow collective (tests/sim covers those).
  REQUIRE(shell(kHetsim + " bench --json --repeats 1 --scenario replay-1k > " +
                scratch.at("out.json")) == 0);
  const nlohmann::json report = hetsim::test::read_json(scratch.at("out.json"));
  CHECK(report.at("repeats") == 1);
  const nlohmann::json& scenarios = report.at("scenarios");
  REQUIRE(scenarios.size() == 1);
  CHECK(scenarios[0].at("name") == "replay-1k");
  for (const nlohmann::json& s : scenarios) {
    INFO(s.dump());
    for (const char* field :
         {"events", "wall_s", "events_per_s", "loop_wall_s", "loop_events_per_s", "mean_pending",
          "peak_rss_mib", "simulated_s", "bare_loop_wall_s", "bare_loop_events_per_s",
          "ratio_to_bare_loop", "loop_ratio_to_bare_loop"}) {
      REQUIRE(s.contains(field));
      REQUIRE(s.at(field).is_number());
      const double value = s.at(field).get<double>();
      CHECK(std::isfinite(value));
      CHECK(value > 0);
    }
    // The rates are the event count over the wall times printed beside them.
    const double events = s.at("events").get<double>();
    CHECK(s.at("events_per_s").get<double>() ==
          doctest::Approx(events / s.at("wall_s").get<double>()));
    CHECK(s.at("ratio_to_bare_loop").get<double>() ==
          doctest::Approx(s.at("events_per_s").get<double>() /
                          s.at("bare_loop_events_per_s").get<double>()));
    CHECK(s.at("loop_events_per_s").get<double>() ==
          doctest::Approx(events / s.at("loop_wall_s").get<double>()));
    CHECK(s.at("loop_ratio_to_bare_loop").get<double>() ==
          doctest::Approx(s.at("loop_events_per_s").get<double>() /
                          s.at("bare_loop_events_per_s").get<double>()));
    // The event loop is part of the scenario, which also loads the cluster and costs the ops.
    CHECK(s.at("loop_wall_s").get<double>() < s.at("wall_s").get<double>());
  }
  // The 1,024-GPU replay's events are the deterministic count the replay makes; its 128 workers
  // (tensor-parallel groups) keep fewer events pending than there are GPUs.
  CHECK(scenarios[0].at("events").get<double>() > 100000);
  CHECK(scenarios[0].at("mean_pending").get<double>() > 1);
  CHECK(scenarios[0].at("mean_pending").get<double>() < 1024);
}

TEST_CASE("hetsim bench refuses an unknown scenario and a repeat count out of range") {
  const Scratch scratch;
  CHECK(shell(kHetsim + " bench --scenario replay-2k 2> " + scratch.at("err")) == 1);
  CHECK(slurp(scratch.at("err")) ==
        "hetsim: error: --scenario: got \"replay-2k\"; expected one of replay-1k, replay-16k, "
        "flat-ring-128\n");
  CHECK(shell(kHetsim + " bench --repeats 0 2> " + scratch.at("err")) == 1);
  CHECK(slurp(scratch.at("err")) == "hetsim: error: --repeats: got 0; expected 1 to 100\n");
}

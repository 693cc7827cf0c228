// A profile names the raw CSVs it was fitted from (`raw_measurements`): a list, one entry per
// measurement file; profiles written when a profile came from one file hold a single string and
// still load, as a one-file list.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "models/calibration/profile.hpp"

using namespace hetsim::calibration;

namespace {

Profile with_sources(const std::string& raw_measurements_json) {
  return Profile::from_json(nlohmann::json::parse(R"({"format": "hetsim-profile/1", "gpu": {"name": "x"},
      "raw_measurements": )" + raw_measurements_json + "}"),
                            "p.json");
}

std::string message_of(const std::string& raw_measurements_json) {
  try {
    with_sources(raw_measurements_json);
  } catch (const hetsim::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("raw_measurements: a list of files round-trips in order") {
  const Profile p = with_sources(R"(["compute/mlp.csv", "network/all_reduce.csv"])");
  CHECK(p.data().raw_measurements == std::vector<std::string>{"compute/mlp.csv", "network/all_reduce.csv"});
  CHECK(p.to_json()["raw_measurements"] == nlohmann::json::array({"compute/mlp.csv", "network/all_reduce.csv"}));
  CHECK(Profile::from_json(p.to_json(), "q.json").to_json() == p.to_json());
}

TEST_CASE("raw_measurements: a single string (the older form) loads as a one-file list") {
  CHECK(with_sources(R"("h200.raw.csv")").data().raw_measurements == std::vector<std::string>{"h200.raw.csv"});
  CHECK(with_sources(R"("")").data().raw_measurements.empty());
  CHECK(Profile::from_json(nlohmann::json::parse(R"({"format": "hetsim-profile/1", "gpu": {"name": "x"}})"), "p.json")
            .data()
            .raw_measurements.empty());
}

TEST_CASE("raw_measurements: anything but file names is refused with its path") {
  CHECK(message_of("3") == "p.json: /raw_measurements: got 3; expected an array of CSV file names (or one file name)");
  CHECK(message_of(R"(["a.csv", 7])") == "p.json: /raw_measurements/1: got 7; expected a CSV file name");
  CHECK(message_of(R"(["a.csv", ""])") == "p.json: /raw_measurements/1: got \"\"; expected a CSV file name");
}

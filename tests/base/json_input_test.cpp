// JsonInput: every error names the file, the JSON path, the value and what was expected.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "base/json_input.hpp"

using hetsim::InputError;
using hetsim::JsonInput;

namespace {
std::string message_of(auto&& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("a missing member names its JSON path") {
  const auto doc = nlohmann::json::parse(R"({"sites": [{"name": "a"}]})");
  const JsonInput root(doc, "c.json");
  CHECK(message_of([&] { root.at("sites").at(0).positive("count"); }) ==
        "c.json: /sites/0/count: got nothing (missing); expected a value for required member \"count\"");
}

TEST_CASE("wrong type, zero and negative values are rejected with the value shown") {
  const auto doc = nlohmann::json::parse(R"({"a": "x", "b": 0, "c": -1.5, "d": 2.5})");
  const JsonInput root(doc, "f.json");
  CHECK(message_of([&] { root.number("a"); }) == "f.json: /a: got \"x\"; expected a number");
  CHECK(message_of([&] { root.positive("b"); }) == "f.json: /b: got 0; expected a number > 0");
  CHECK(message_of([&] { root.non_negative("c"); }) == "f.json: /c: got -1.5; expected a number >= 0");
  CHECK(message_of([&] { root.integer("d"); }) == "f.json: /d: got 2.5; expected an integer");
  CHECK(root.positive("d") == 2.5);
}

TEST_CASE("an unknown key suggests the nearest known one") {
  const auto doc = nlohmann::json::parse(R"({"bandwith_Gbps": 400})");
  const JsonInput root(doc, "n.json");
  CHECK(message_of([&] { root.reject_unknown_keys({"bandwidth_Gbps", "latency_us"}); }) ==
        "n.json: /bandwith_Gbps: got unknown key \"bandwith_Gbps\"; expected a known key; did you "
        "mean \"bandwidth_Gbps\"?");
}

TEST_CASE("unreadable and non-JSON files") {
  CHECK(message_of([] { hetsim::read_json_file("/nonexistent/x.json"); }) ==
        "/nonexistent/x.json: (document): got an unreadable file; expected a readable JSON file");
}

// JsonInput: every error names the file, the JSON path, the value and what was expected.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "base/input_file.hpp"
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

namespace {
// A file in a fresh scratch folder, removed with the folder.
struct ScratchFile {
  std::filesystem::path dir;
  std::filesystem::path path;
  explicit ScratchFile(const std::string& text, const std::string& name = "input.json") {
    dir = std::filesystem::temp_directory_path() /
          ("hetsim-json-input-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::create_directories(dir);
    path = dir / name;
    std::ofstream(path, std::ios::binary) << text;
  }
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};
}  // namespace

TEST_CASE("a folder given as an input file is named as a folder") {
  const ScratchFile f("{}", "folder.json");
  CHECK(message_of([&] { hetsim::read_json_file(f.dir.string()); }) ==
        f.dir.string() + ": (document): got a directory; expected a JSON file");
}

namespace {
std::string nested_objects(int levels) {
  std::string text = R"({"a":{"b":[1,{"c":)";
  for (int i = 0; i < levels; ++i) text += R"({"k":)";
  return text;
}
}  // namespace

TEST_CASE("nesting beyond 64 levels is refused at the level where it goes too deep") {
  // 100,000 nested arrays used to overflow the stack of whatever walked the document next.
  const ScratchFile f(std::string(100000, '['), "deep.json");
  std::string pointer;
  for (int i = 0; i < 64; ++i) pointer += "/0";
  CHECK(message_of([&] { hetsim::read_json_file(f.path.string()); }) ==
        f.path.string() + ": " + pointer +
            ": got nesting deeper than 64 levels; expected a JSON document nested at most that deep");
  const ScratchFile objects(nested_objects(200), "deep-objects.json");
  CHECK(message_of([&] { hetsim::read_json_file(objects.path.string()); })
            .find("nesting deeper than 64 levels") != std::string::npos);
}

TEST_CASE("a key repeated in one object is refused with its path, not silently overwritten") {
  const ScratchFile f(R"({"sites": [{"name": "a"}, {"name": "b", "gpus": 8, "name": "c"}]})", "dup.json");
  CHECK(message_of([&] { hetsim::read_json_file(f.path.string()); }) ==
        f.path.string() + ": /sites/1/name: got a key repeated in its object; expected each key at most once");
  // The same key in two different objects is fine.
  const ScratchFile ok(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})", "ok.json");
  CHECK(hetsim::read_json_file(ok.path.string())["c"][1]["x"] == 4);
}

TEST_CASE("an input file beyond 32 MiB is refused before it is parsed") {
  const ScratchFile f(std::string((std::size_t{32} << 20) + 1, ' '), "huge.json");
  CHECK(message_of([&] { hetsim::read_json_file(f.path.string()); }) ==
        f.path.string() + ": (document): got a file of more than 32 MiB; expected a JSON file of at most that size");
}

TEST_CASE("an endless input is refused at the size limit, not read until memory runs out") {
  // /dev/zero never ends: before the shared bounded reader, the CSV readers grew without limit.
  const std::string limit = "(document): got a file of more than 32 MiB; expected a ";
  CHECK(message_of([] { hetsim::read_json_file("/dev/zero"); }) == "/dev/zero: " + limit + "JSON file of at most that size");
  CHECK(message_of([] { hetsim::read_input_file("/dev/zero", "CSV file"); }) ==
        "/dev/zero: " + limit + "CSV file of at most that size");
}

TEST_CASE("a key holding a newline still gives a one-line error") {
  const auto doc = nlohmann::json::parse("{\"band\\nwidth\": 1}");
  const JsonInput root(doc, "k.json");
  const std::string message = message_of([&] { root.reject_unknown_keys({"bandwidth_Gbps"}); });
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message == R"(k.json: /band\nwidth: got unknown key "band\nwidth"; expected one of the known keys)");
}

TEST_CASE("a huge value is described in a bounded number of characters") {
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i) big.push_back(nlohmann::json{{"rank", i}});
  const JsonInput value(big, "b.json", "/ops");
  const std::string message = message_of([&] { value.fail("a small array"); });
  CHECK(message == R"(b.json: /ops: got [{"rank":0},{"rank":1},{"rank":2},{"rank":3},{"rank":4},{"ra...; expected a small array)");
}

TEST_CASE("a number beyond double range is an input error, not an internal one") {
  const ScratchFile f(R"({"name": "x", "sites": 1e400})", "overflow.json");
  CHECK(message_of([&] { hetsim::read_json_file(f.path.string()); }) ==
        f.path.string() +
            ": /sites: got a number beyond the range of a double (about 1.8e308); expected numbers a "
            "double can hold");
}

TEST_CASE("a free-text note of another type is refused wherever keys are checked") {
  // Every loader's objects go through reject_unknown_keys, so pair links and switch tiers get the
  // check the cluster loader once made alone.
  const auto doc = nlohmann::json::parse(R"({"pair_links": {"source": 3, "machines": []}})");
  const JsonInput links = JsonInput(doc, "p.json").at("pair_links");
  CHECK(message_of([&] { links.reject_unknown_keys({"source", "machines"}); }) ==
        "p.json: /pair_links/source: got 3; expected a string");
}

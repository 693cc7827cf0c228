// The CSV importer and its column mappings: good rows, and one pinned message per class of bad
// input (file, line/JSON path, value, expectation).
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "models/calibration/csv_importer.hpp"
#include "models/calibration/profile.hpp"

using namespace hetsim::calibration;

namespace {
const auto kMapping = nlohmann::json::parse(R"({
  "time_unit": "ms",
  "tags": {"tp": "tp"},
  "ops": [{"label": "up", "kind": "gemm", "op": "gemm", "dtype": "fp16", "time": "t_up",
           "m": "tokens", "n": "ffn * (1 + gated) / tp", "k": "hidden"}]
})");

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const hetsim::Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("a mapping turns profiler columns into GEMM shapes") {
  const auto ms = import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n128,4096,11008,True,2,0.25\n", "p.csv", kMapping,
                                  "map.json");
  REQUIRE(ms.size() == 1);
  CHECK(ms[0].m == 128);
  CHECK(ms[0].n == 11008);  // 11008 * 2 / 2
  CHECK(ms[0].k == 4096);
  CHECK(ms[0].seconds == doctest::Approx(0.25e-3));
  CHECK(ms[0].tag("tp") == 2);
  CHECK(ms[0].source == "p.csv:2");
}

TEST_CASE("bad CSV cells and bad mappings name where they are") {
  CHECK(message_of([] {
          import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n128,4096,x1,True,2,0.25\n", "p.csv", kMapping, "map.json");
        }) == "p.csv: line 2, column \"ffn\": got \"x1\"; expected a number (or True/False)");
  CHECK(message_of([] {
          import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n128,4096,11008,True,2,0\n", "p.csv", kMapping, "map.json");
        }) == "p.csv: line 2: got time 0 s (from \"t_up\"); expected a time > 0");
  CHECK(message_of([] {
          import_csv_text("tokens,hiden,ffn,gated,tp,t_up\n1,2,3,True,1,1\n", "p.csv", kMapping, "map.json");
        }) == "map.json: /ops/0/k: got \"hidden\" (no column \"hidden\" in p.csv); expected a column of that CSV's "
              "header (did you mean \"hiden\"?)");  // the mapping names it: before, told at p.csv's line 1
  CHECK(message_of([] {
          import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n1,2,3\n", "p.csv", kMapping, "map.json");
        }) == "p.csv: line 2: got 3 cells; expected 6 cells, one per header column");
  CHECK(message_of([] {
          import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n128,4096,11008,True,0,0.25\n", "p.csv", kMapping,
                          "map.json");
        }) == "p.csv: line 2: got n = inf (from \"ffn * (1 + gated) / tp\"); expected a n > 0");
  auto bad_kind = kMapping;
  bad_kind["ops"][0]["kind"] = "gem";
  CHECK(message_of([&] { import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n1,2,3,True,1,1\n", "p.csv", bad_kind, "map.json"); }).starts_with(
      "map.json: /ops/0/kind: got \"gem\"; expected one of gemm"));
  auto bad_expression = kMapping;
  bad_expression["ops"][0]["n"] = "ffn * (1 + gated";
  CHECK(message_of([&] {
          import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n1,2,3,True,1,1\n", "p.csv", bad_expression, "map.json");
        }) == "map.json: /ops/0/n: got \"ffn * (1 + gated\" (missing ')'); expected an expression of numbers, "
              "column names, + - * / ( ) and comparisons");
  auto missing = kMapping;
  missing["ops"][0].erase("k");
  CHECK(message_of([&] {
          import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n1,2,3,True,1,1\n", "p.csv", missing, "map.json");
        }) == "map.json: /ops/0/k: got nothing (missing); expected an expression for \"k\", which gemm rows need");
}

TEST_CASE("bad profile JSON names the path") {
  CHECK(message_of([] {
          Profile::from_json(nlohmann::json::parse(R"({"format": "hetsim-profile/1", "gpu": {"name": "x"},
            "gemm_m_n_k_seconds": {"bf61": []}})"),
                             "p.json");
        }) == "p.json: /gemm_m_n_k_seconds/bf61: got []; expected a dtype key; did you mean \"bf16\"?");
}

TEST_CASE("a profile's memory-bound kind must be one the cost model or the suite knows") {
  // "rmsnrom" used to load and never be looked up: every norm silently fell back to the roofline.
  CHECK(message_of([] {
          Profile::from_json(nlohmann::json::parse(R"({"format": "hetsim-profile/1", "gpu": {"name": "x"},
            "memory_bound_bytes_seconds": {"rmsnrom": [[1048576, 1e-5]]}})"),
                             "p.json");
        }) == "p.json: /memory_bound_bytes_seconds/rmsnrom: got [[1048576,1e-05]]; expected a memory-bound "
              "kind; did you mean \"rmsnorm\"?");
}

TEST_CASE("a profile row outside physical ranges is refused, not turned into inf or NaN") {
  // 1e-300 s and 1e300 bytes used to give an infinite iteration time and MFU -nan with exit 0.
  const auto load = [](const std::string& rows) {
    return message_of([&] {
      Profile::from_json(nlohmann::json::parse(R"({"format": "hetsim-profile/1", "gpu": {"name": "x"},
            "memory_bound_bytes_seconds": {"add": )" + rows + "}}"),
                         "p.json");
    });
  };
  CHECK(load("[[1048576, 1e-300]]") ==
        "p.json: /memory_bound_bytes_seconds/add/0/1: got 1e-300; expected a time in seconds between 1e-09 and 3600");
  CHECK(load("[[1e300, 1e-5]]") ==
        "p.json: /memory_bound_bytes_seconds/add/0/0: got 1e+300; expected a size between 1 and 1e+15");
  CHECK(load("[[1048576, 1e-5]]") == "(no error)");
}

// Fuzzing findings (tests/fuzz, fuzz_expression): deep nesting overflowed the stack of the
// recursive parser, and a long chain of terms that of the recursive evaluation.
TEST_CASE("an expression nested too deep or too long is refused before it can overflow the stack") {
  const auto with_n = [](const std::string& n) {
    auto mapping = kMapping;
    mapping["ops"][0]["n"] = n;
    return message_of([&] {
      import_csv_text("tokens,hidden,ffn,gated,tp,t_up\n1,2,3,True,1,1\n", "p.csv", mapping, "map.json");
    });
  };
  const std::string parens = std::string(65, '(') + "ffn" + std::string(65, ')');
  CHECK(with_n(parens) == "map.json: /ops/0/n: got \"" + parens +
                              "\" (nested more than 64 levels deep at character 65); expected an expression of "
                              "numbers, column names, + - * / ( ) and comparisons");
  const std::string signs = std::string(65, '-') + "ffn";
  CHECK(with_n(signs) == "map.json: /ops/0/n: got \"" + signs +
                             "\" (nested more than 64 levels deep at character 65); expected an expression of "
                             "numbers, column names, + - * / ( ) and comparisons");
  std::string chain = "ffn";
  while (chain.size() <= 1000) chain += "+ffn";
  CHECK(with_n(chain) == "map.json: /ops/0/n: got an expression of 1003 characters; expected an expression of "
                         "at most 1000 characters");
  // At the limits: 64 levels of either kind, and 1,000 characters, still evaluate.
  const std::string deepest = std::string(32, '(') + std::string(32, '-') + "ffn" + std::string(32, ')');
  CHECK(with_n(deepest) == "(no error)");
  std::string longest = "ffn";
  while (longest.size() + 4 <= 1000) longest += "+ffn";
  longest += std::string(1000 - longest.size(), ' ');
  CHECK(with_n(longest) == "(no error)");
}

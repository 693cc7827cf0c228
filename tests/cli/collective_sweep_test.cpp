// `hetsim collective --sweep MIN:MAX:FACTOR`: a row per size as nccl-tests prints its curve, each
// the same figures as the single-size run of that size.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_support.hpp"

using hetsim::test::read_json;
using hetsim::test::shell;

namespace {

const std::string kHetsim = HETSIM_BINARY;

std::filesystem::path scratch_file(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("hetsim-collective-sweep-" + std::to_string(::getpid()) + "-" + name);
}

}  // namespace

TEST_CASE("collective --sweep gives a row per size, each equal to that size's own run") {
  // Before: one size per run (nccl-tests users compare curves: -b 8 -e 8G -f 2).
  const auto curve = scratch_file("curve.json");
  REQUIRE(shell(kHetsim + " collective --gpus 8 --sweep 1K:16K:4 --json > " + curve.string()) == 0);
  const nlohmann::json sweep = read_json(curve);
  REQUIRE(sweep.at("sizes").size() == 3);  // 1 KiB, 4 KiB, 16 KiB
  double bytes = 1024;
  for (const nlohmann::json& row : sweep.at("sizes")) {
    CAPTURE(bytes);
    CHECK(row.at("bytes").get<double>() == bytes);
    const auto one = scratch_file("one.json");
    REQUIRE(shell(kHetsim + " collective --gpus 8 --bytes " + std::to_string(static_cast<long>(bytes)) +
                  " --json > " + one.string()) == 0);
    const nlohmann::json single = read_json(one);
    for (const char* key : {"time_s", "algbw_GBps", "busbw_GBps", "transfers", "events"}) CHECK(row.at(key) == single.at(key));
    std::filesystem::remove(one);
    bytes *= 4;
  }
  std::filesystem::remove(curve);
  CHECK(shell(kHetsim + " collective --sweep 8:4:2 2> /dev/null") == 1);
  CHECK(shell(kHetsim + " collective --sweep 8:8G:1 2> /dev/null") == 1);
  CHECK(shell(kHetsim + " collective --sweep 8:8G:2 --bytes 1G 2> /dev/null") == 1);
}

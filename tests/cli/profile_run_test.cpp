// A measured profile drives the op costs of `hetsim run --profile`, and the report says which op
// classes it costed: the profile is refitted from the real A100 measurements in tests/data/vidur
// (fp16 kernels), through the same importer a user runs on their own CSV.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_test_support.hpp"

using hetsim::test::read_json;
using hetsim::test::shell;

TEST_CASE("run --profile costs ops from the profile and reports the sources") {
  const std::string root = HETSIM_SOURCE_DIR;
  const std::string bin = HETSIM_BINARY;
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-profile-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto profile = dir / "a100-vidur.json";
  REQUIRE(shell(bin + " calibrate --refit " + root +
                "/tests/data/vidur/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv --mapping " + root +
                "/models/calibration/mappings/vidur_compute.json --out " + profile.string() + " > /dev/null") == 0);
  const std::string run = bin + " run --cluster " + root + "/topologies/clusters/dgx-a100-2node.json --model " +
                          root + "/models/configs/llama-2-7b.json --tp 2 --pp 2 --gbs 32 --seq-length 4096 --json";
  REQUIRE(shell(run + " --profile " + profile.string() + " > " + (dir / "with.json").string()) == 0);
  REQUIRE(shell(run + " > " + (dir / "without.json").string()) == 0);
  const auto with = read_json(dir / "with.json");
  const auto without = read_json(dir / "without.json");
  const auto& sources = with["cost_sources"];
  CHECK(sources["profiles"] == nlohmann::json::array({profile.string()}));
  // The measured norms and elementwise kernels come from the profile...
  CHECK(sources["memory_bound"]["profile"].get<int>() > 0);
  // ...while the profile's GEMMs are fp16 and the plan trains in bf16, so GEMMs fall back.
  CHECK(sources["gemm"]["profile"].get<int>() == 0);
  CHECK(sources["gemm"]["roofline"].get<int>() > 0);
  CHECK(without["cost_sources"]["memory_bound"]["profile"].get<int>() == 0);
  CHECK(with["iteration_time_s"] != without["iteration_time_s"]);
  std::filesystem::remove_all(dir);
}

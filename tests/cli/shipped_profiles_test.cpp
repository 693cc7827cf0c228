// The profiles shipped in models/profiles are what tools/calibrate/fit_shipped_profiles.sh fits
// from the measurements recorded in tests/data/vidur (so neither can drift from the other), and
// `hetsim run --profile` costs a DGX A100 run's ops from the A100 one out of the box.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

using hetsim::test::read_json;
using hetsim::test::shell;
using hetsim::test::slurp;

namespace {

const std::filesystem::path kRoot = HETSIM_SOURCE_DIR;

// The measurement files each shipped profile is fitted from, in the order the script gives them.
const std::map<std::string, std::vector<std::string>> kSources = {
    {"a100-80gb.json",
     {"tests/data/vidur/compute/a100/meta-llama/Llama-2-7b-hf/mlp.csv",
      "tests/data/vidur/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv",
      "tests/data/vidur/network/a100_dgx/all_reduce.csv", "tests/data/vidur/network/a100_dgx/send_recv.csv"}},
    {"a40.json", {"tests/data/vidur/compute/a40/meta-llama/Llama-2-7b-hf/mlp.csv"}},
};

struct Scratch {
  Scratch(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("hetsim-shipped-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~Scratch() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// Runs the script with this build's binary, writing the profiles to `dir`.
void fit_into(const std::filesystem::path& dir) {
  REQUIRE(shell("HETSIM=" + std::string(HETSIM_BINARY) + " " + (kRoot / "tools/calibrate/fit_shipped_profiles.sh").string() +
                " " + dir.string() + " > /dev/null") == 0);
}

// The profile at `path` with its raw_measurements checked to name `sources` (relative to the
// profile's directory) and then removed: where the profile was written changes only those paths.
nlohmann::json without_sources(const std::filesystem::path& path, const std::vector<std::string>& sources) {
  nlohmann::json profile = read_json(path);
  const auto& named = profile["raw_measurements"];
  REQUIRE(named.size() == sources.size());
  for (std::size_t i = 0; i < sources.size(); ++i) {
    CAPTURE(named[i]);
    CHECK(std::filesystem::equivalent(path.parent_path() / named[i].get<std::string>(), kRoot / sources[i]));
  }
  profile.erase("raw_measurements");
  return profile;
}

nlohmann::json run_report(const std::string& args, const std::filesystem::path& dir) {
  const auto report = dir / "report.json";
  REQUIRE(shell(std::string(HETSIM_BINARY) + " run --cluster " + (kRoot / "topologies/clusters/dgx-a100-2node.json").string() +
                " --model " + (kRoot / "models/configs/llama-2-7b.json").string() +
                " --tp 2 --pp 2 --gbs 32 --seq-length 4096 --json " + args + " > " + report.string()) == 0);
  return read_json(report);
}

}  // namespace

TEST_CASE("the shipped profiles are a fresh refit of the recorded measurements, byte for byte when regenerated") {
  Scratch first("first"), second("second");
  fit_into(first.path);
  fit_into(second.path);
  for (const auto& source : kSources) {
    const auto& name = source.first;
    const auto& sources = source.second;
    CAPTURE(name);
    CHECK(slurp(first.path / name) == slurp(second.path / name));
    CHECK(without_sources(kRoot / "models/profiles" / name, sources) == without_sources(first.path / name, sources));
  }
  const auto a100 = read_json(kRoot / "models/profiles/a100-80gb.json");
  CHECK(a100["gpu"]["name"] == "NVIDIA A100-SXM4-80GB");
  CHECK(read_json(kRoot / "models/profiles/a40.json")["gpu"]["name"] == "NVIDIA A40");
  // The datasheet peaks in the dtype measured, so `calibrate --report` needs no flags.
  CHECK(a100["gpu"]["peak_tflops"] == nlohmann::json({{"fp16", 312.0}}));
  CHECK(a100["gpu"]["hbm_GBps"] == 2039.0);
  for (const auto& [name, sources] : kSources) {
    CHECK(shell(std::string(HETSIM_BINARY) + " calibrate --report " + (kRoot / "models/profiles" / name).string() +
                " > /dev/null") == 0);
  }
  // The network CSVs give the all-reduce at 2, 4 and 8 GPUs of one node, and send/recv at 2.
  CHECK(a100["collectives"]["all_reduce"].size() == 3);
  CHECK(a100["collectives"]["send_recv"].size() == 1);
}

TEST_CASE("run --profile models/profiles/a100-80gb.json costs a DGX A100 run from the measurements") {
  Scratch scratch("run");
  const std::string profile = " --profile " + (kRoot / "models/profiles/a100-80gb.json").string();
  // vidur timed fp16 kernels: an fp16 run takes its GEMMs, norms, elementwise kernels and TP
  // all-reduces from the profile; the attention core, which vidur's rows do not time, and the
  // kernels the profile has no kind for fall back to the roofline.
  const auto fp16 = run_report("--fp16" + profile, scratch.path);
  const auto& sources = fp16["cost_sources"];
  CHECK(sources["gemm"]["profile"].get<int>() > 0);
  CHECK(sources["gemm"]["roofline"].get<int>() == 0);
  CHECK(sources["memory_bound"]["profile"].get<int>() > 0);
  CHECK(sources["tp_collective"]["profile"].get<int>() > 0);
  CHECK(sources["tp_collective"]["roofline"].get<int>() == 0);
  CHECK(sources["attention"]["profile"].get<int>() == 0);
  CHECK(sources["attention"]["roofline"].get<int>() > 0);
  const auto roofline = run_report("--fp16", scratch.path);
  CHECK(roofline["cost_sources"]["gemm"]["profile"].get<int>() == 0);
  CHECK(fp16["iteration_time_s"] != roofline["iteration_time_s"]);
  // The default bf16 run finds no bf16 GEMMs in the profile: those fall back, the rest does not.
  const auto bf16 = run_report(profile, scratch.path)["cost_sources"];
  CHECK(bf16["gemm"]["profile"].get<int>() == 0);
  CHECK(bf16["memory_bound"]["profile"].get<int>() > 0);
  CHECK(bf16["tp_collective"]["profile"].get<int>() > 0);
}

// `hetsim plan` end to end: the JSON it prints on a small space, the text table, and one clear
// error line for each class of bad flag.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using hetsim::test::read_json;
using hetsim::test::shell;

const std::string kRoot = HETSIM_SOURCE_DIR;
const std::string kHetsim = HETSIM_BINARY;

// Llama-3.2-1B on one DGX A100, by default a global batch of 8 sequences of 256 tokens: a space
// of a few hundred plans.
std::string small_plan(const std::string& extra, const std::string& batch = "--gbs 8",
                       const std::string& seq = "--seq-length 256") {
  return kHetsim + " plan --cluster " + kRoot + "/topologies/clusters/dgx-a100-1node.json" +
         " --model " + kRoot + "/models/configs/llama-3.2-1b.json " + batch + " " + seq + " " +
         extra;
}

struct Output {
  Output() : path(fs::temp_directory_path() / ("hetsim-plan-cli-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~Output() { fs::remove_all(path); }
  std::string at(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

TEST_CASE("plan --json ranks the top plans and counts the search") {
  const Output out;
  REQUIRE(shell(small_plan("--top 3 --json > " + out.at("plan.json"))) == 0);
  const nlohmann::json plan = read_json(out.at("plan.json"));
  CHECK(plan.at("objective") == "time");
  const nlohmann::json& top = plan.at("top");
  REQUIRE(top.size() == 3);
  for (std::size_t k = 0; k < top.size(); ++k) {
    CHECK(top[k].at("rank") == k + 1);
    CHECK(top[k].at("lower_bound").get<double>() <= top[k].at("iteration_time_s").get<double>());
    if (k > 0)
      CHECK(top[k - 1].at("iteration_time_s").get<double>() <=
            top[k].at("iteration_time_s").get<double>());
  }
  CHECK(top[0].at("why").get<std::string>().rfind("best time", 0) == 0);
  CHECK(top[1].at("why").get<std::string>().rfind("+", 0) == 0);
  CHECK(plan.at("candidates").get<int>() ==
        plan.at("pruned_by_memory").get<int>() + plan.at("over_budget").get<int>() +
            plan.at("refused").get<int>() + plan.at("pruned_by_bound").get<int>() +
            plan.at("simulated").get<int>());
  // The best plan replays as `run` with its flags: the same iteration time.
  const nlohmann::json& point = top[0].at("plan");
  std::string flags;
  for (const auto& [key, value] : point.items()) {
    if (value.is_boolean()) {
      if (value.get<bool>()) flags += " --" + key;
    } else {
      flags += " --" + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  REQUIRE(shell(kHetsim + " run" + flags + " --json > " + out.at("run.json")) == 0);
  CHECK(read_json(out.at("run.json")).at("iteration_time_s").get<double>() ==
        top[0].at("iteration_time_s").get<double>());
}

TEST_CASE("plan prints a table with a reason per row") {
  const Output out;
  REQUIRE(shell(small_plan("--top 2 --objective cost > " + out.at("plan.txt"))) == 0);
  CHECK(first_line(out.at("plan.txt")).rfind("plan search (cost): ", 0) == 0);
}

TEST_CASE("plan refuses bad flags with one line naming the flag") {
  const Output out;
  const std::string err = out.at("err.txt");
  CHECK(shell(small_plan("2> " + err, "--gbs 0")) == 1);
  CHECK(first_line(err) == "hetsim: error: --gbs: got 0; expected a global batch size >= 1");
  CHECK(shell(small_plan("--budget-usd-per-hour -1 2> " + err)) == 1);
  CHECK(first_line(err) ==
        "hetsim: error: --budget-usd-per-hour: got -1; expected dollars per hour > 0");
  for (const char* budget : {"nan", "0", "inf"}) {
    CAPTURE(budget);
    CHECK(shell(small_plan(std::string("--budget-usd-per-hour ") + budget + " 2> " + err)) == 1);
    CHECK(first_line(err) ==
          std::string("hetsim: error: --budget-usd-per-hour: got ") + budget + "; expected dollars per hour > 0");
  }
  CHECK(shell(small_plan("--top 0 2> " + err)) == 1);
  CHECK(first_line(err) == "hetsim: error: --top: got 0; expected a count >= 1");
  CHECK(shell(small_plan("2> " + err, "--gbs 8", "--seq-length 0")) == 1);
  CHECK(first_line(err) == "hetsim: error: --seq-length: got 0; expected tokens >= 1");
  CHECK(shell(small_plan("--objective speed 2> " + err)) != 0);
  CHECK(shell(kHetsim + " plan --model " + out.at("missing.json") + " 2> " + err) == 1);
  CHECK(first_line(err).find("missing.json") != std::string::npos);
}

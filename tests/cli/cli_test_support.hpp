#pragma once
// What the command-line tests share: running a shell command for its exit status and reading the
// files a run wrote.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace hetsim::test {

inline int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A file's bytes as they are (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json read_json(const std::filesystem::path& path) { return nlohmann::json::parse(slurp(path)); }

// One `hetsim run` job's report in both forms.
struct RunReport {
  nlohmann::json json;
  std::string table;
};

// `hetsim run ARGS` with --json and, when `with_table`, again without; each must exit 0.
inline RunReport run_report(const std::string& args, bool with_table = true) {
  static int counter = 0;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("hetsim-run-report-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  const std::string command = std::string(HETSIM_BINARY) + " run " + args;
  REQUIRE(shell(command + " --json > " + (dir / "report.json").string()) == 0);
  if (with_table) REQUIRE(shell(command + " > " + (dir / "table.txt").string()) == 0);
  RunReport r{read_json(dir / "report.json"), with_table ? slurp(dir / "table.txt") : std::string()};
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace hetsim::test

#pragma once
// What every libFuzzer target of tests/fuzz shares: the input as text or as a file (for parsers
// that read a path), the rule that a hetsim InputError is an expected outcome while anything else
// is a finding, and a check that parsed numbers are finite.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>

#include "base/error.hpp"

namespace hetsim::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Prints what broke and aborts, so that libFuzzer keeps the input as a crash.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

inline void require_finite(double value, std::string_view what) {
  if (!std::isfinite(value)) finding(std::string(what) + " is not finite");
}

// A directory of this process's own under the system's temporary directory, removed at exit,
// for the parsers that only read from a path (the JSON loaders share read_json_file's size and
// depth checks, which is part of what is fuzzed).
class ScratchDirectory {
 public:
  ScratchDirectory()
      : path_(std::filesystem::temp_directory_path() /
              ("hetsim-fuzz-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  // Writes `bytes` to `name` inside the directory (replacing it) and returns the file's path.
  std::string write(const std::string& name, const std::uint8_t* bytes, std::size_t size) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes), static_cast<std::streamsize>(size));
    if (!out) finding("cannot write the scratch file " + file.string());
    return file.string();
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline const ScratchDirectory& scratch() {
  static const ScratchDirectory directory;
  return directory;
}

// Whether the parser refused the latest input with an InputError: the replay main outside
// fuzzing builds (fuzz_replay_main.cpp) reports it beside the input's peak memory.
inline bool& last_input_refused() {
  static bool refused = false;
  return refused;
}

// Runs `parse` on one input. A hetsim::InputError is how a parser refuses bad input, and must
// be one line; any other exception escapes and ends the run as a finding, as do crashes and
// sanitizer reports.
template <typename Parse>
int expect_input_errors(Parse&& parse) {
  last_input_refused() = false;
  try {
    std::forward<Parse>(parse)();
  } catch (const InputError& e) {
    last_input_refused() = true;
    if (std::string_view(e.what()).find('\n') != std::string_view::npos)
      finding(std::string("an error message of more than one line: ") + e.what());
  }
  return 0;
}

}  // namespace hetsim::fuzz

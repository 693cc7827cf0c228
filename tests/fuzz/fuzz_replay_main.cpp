// The main of the fuzz targets in builds without libFuzzer (HETSIM_FUZZ off): runs the target on
// each file named (or on every file of each directory named, in name order), each in a child
// process, and prints one line per input: "refused", "accepted" (or "unreadable"), the child's
// peak resident memory in KiB, its CPU time in seconds (user + system) and the file. tools/fuzz_memory.sh replays the fuzzing corpora with it in an
// optimised build, where the peak memory is the parser's own rather than the sanitizers'.
// Exits 1 when a child ends other than by returning from the target.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::string> inputs_of(int argc, char** argv) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    if (!std::filesystem::is_directory(argv[i])) {
      inputs.emplace_back(argv[i]);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(argv[i]))
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    inputs.insert(inputs.end(), files.begin(), files.end());
  }
  return inputs;
}

// Exit statuses of the child: the parser accepted the input, refused it, or the file could not be
// read (gone since the directory was listed, as when a fuzzer is pruning its corpus meanwhile).
constexpr int kAccepted = 0;
constexpr int kRefused = 1;
constexpr int kUnreadable = 2;

// In the child: the target on the file's bytes.
[[noreturn]] void replay(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::exit(kUnreadable);
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  // exit, not _exit: the scratch directory of fuzz_input.hpp is removed by a static destructor.
  std::exit(hetsim::fuzz::last_input_refused() ? kRefused : kAccepted);
}

}  // namespace

int main(int argc, char** argv) {
  bool broken = false;
  for (const std::string& file : inputs_of(argc, argv)) {
    std::fflush(stdout);  // the child must not print the parent's buffered lines again
    const pid_t child = ::fork();
    if (child < 0) {
      std::perror("fork");
      return 1;
    }
    if (child == 0) replay(file);
    int status = 0;
    rusage usage{};
    if (::wait4(child, &status, 0, &usage) != child) {
      std::perror("wait4");
      return 1;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const char* outcome = code == kAccepted     ? "accepted"
                          : code == kRefused    ? "refused"
                          : code == kUnreadable ? "unreadable"
                                                : "broken";
    if (code < 0 || code > kUnreadable) broken = true;
    const double cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    std::printf("%s %ld %.3f %s\n", outcome, usage.ru_maxrss, cpu_s, file.c_str());
  }
  return broken ? 1 : 0;
}

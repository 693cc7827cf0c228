// AtomicFile: output appears whole or not at all, special files are written in place, symbolic
// links are followed, and a signal leaves no temporary behind.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/atomic_file.hpp"
#include "base/error.hpp"

namespace fs = std::filesystem;

namespace {
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() / ("hetsim-atomic-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), fs::directory_iterator()));
  }
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

TEST_CASE("a committed file appears whole; an abandoned one leaves nothing") {
  const ScratchDir dir("plain");
  {
    hetsim::AtomicFile file((dir.path / "out.json").string());
    file.stream() << "{}";
    file.commit();
  }
  CHECK(slurp(dir.path / "out.json") == "{}");
  {
    hetsim::AtomicFile file((dir.path / "abandoned.json").string());
    file.stream() << "{";
  }
  CHECK(dir.entries() == 1);
}

TEST_CASE("a FIFO is written in place and stays a FIFO") {
  const ScratchDir dir("fifo");
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = slurp(fifo); });
  {
    hetsim::AtomicFile file(fifo.string());
    file.stream() << "through the pipe";
    file.commit();
  }
  reader.join();
  CHECK(received == "through the pipe");
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  CHECK(dir.entries() == 1);
}

TEST_CASE("a symbolic link is followed: its target is replaced and the link stays") {
  const ScratchDir dir("symlink");
  std::ofstream(dir.path / "target.json") << "old";
  fs::create_symlink(dir.path / "target.json", dir.path / "link.json");
  {
    hetsim::AtomicFile file((dir.path / "link.json").string());
    file.stream() << "new";
    file.commit();
  }
  CHECK(fs::is_symlink(fs::symlink_status(dir.path / "link.json")));
  CHECK(slurp(dir.path / "target.json") == "new");
  CHECK(dir.entries() == 2);
}

TEST_CASE("a directory is refused with its name") {
  const ScratchDir dir("directory");
  std::string message;
  try {
    hetsim::AtomicFile file(dir.path.string());
  } catch (const hetsim::Error& e) {
    message = e.what();
  }
  CHECK(message == dir.path.string() + ": is a directory; expected a file to write");
}

TEST_CASE("SIGTERM, SIGINT, SIGHUP and SIGQUIT while writing remove the temporary") {
  // SIGHUP (a closed terminal) and SIGQUIT used to leave PATH.tmp-PID behind.
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    const ScratchDir dir("signal-" + std::to_string(signal_number));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      hetsim::AtomicFile file((dir.path / "trace.json").string());
      file.stream() << "half";
      file.stream().flush();
      ::raise(signal_number);
      ::_exit(0);  // not reached: the signal's default action ends the process
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    CHECK(dir.entries() == 0);
  }
}

TEST_CASE("a target that cannot be opened says why") {
  // Before: "PATH: cannot open for writing" and nothing more.
  std::string message;
  try {
    hetsim::AtomicFile file("/nonexistent-directory/out.json");
  } catch (const hetsim::Error& e) {
    message = e.what();
  }
  CHECK(message == "/nonexistent-directory/out.json: cannot open for writing: No such file or directory");
}

TEST_CASE("/dev/stdout is written in place when it is a pipe") {
  // Before: "cannot follow the symbolic link", as /proc/self/fd/1 names a pipe, not a file.
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(ends[1], STDOUT_FILENO);
    ::close(ends[0]);
    ::close(ends[1]);
    try {
      hetsim::AtomicFile file("/dev/stdout");
      file.stream() << "through the pipe";
      file.commit();
    } catch (const hetsim::Error&) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(ends[1]);
  std::string received;
  char buffer[64];
  for (ssize_t n; (n = ::read(ends[0], buffer, sizeof buffer)) > 0;) received.append(buffer, static_cast<std::size_t>(n));
  ::close(ends[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(received == "through the pipe");
}

#include "base/atomic_file.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "base/error.hpp"

namespace hetsim {

namespace {

namespace fs = std::filesystem;

// The signals whose default action ends the process without a core dump worth keeping a
// temporary for: an interrupt, a kill, a closed terminal, a quit.
constexpr std::array kCleanupSignals{SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Temporaries to unlink if one of kCleanupSignals arrives: the handler may only call async-signal-safe
// functions, so it reads lock-free pointer slots and calls unlink(2). A slot points into its
// AtomicFile's temp_path_, and is cleared before that string can change or die.
constexpr int kSignalSlots = 64;
std::array<std::atomic<const char*>, kSignalSlots> pending_temporaries{};

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (auto& slot : pending_temporaries)
    if (const char* path = slot.load()) ::unlink(path);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

// Puts the cleanup handler on kCleanupSignals, again if something has replaced it since (a
// test harness, say). A signal that is ignored (nohup) stays ignored. The signal's default action
// follows the cleanup, so the process still ends as the signal says.
void install_signal_cleanup() {
  for (const int s : kCleanupSignals) {
    struct sigaction current {};
    if (::sigaction(s, nullptr, &current) != 0 || current.sa_handler == SIG_IGN ||
        current.sa_handler == remove_temporaries_and_reraise)
      continue;
    struct sigaction cleanup {};
    cleanup.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&cleanup.sa_mask);
    ::sigaction(s, &cleanup, nullptr);
  }
}

int register_temporary(const std::string& path) {
  install_signal_cleanup();
  for (int i = 0; i < kSignalSlots; ++i) {
    const char* expected = nullptr;
    if (pending_temporaries[i].compare_exchange_strong(expected, path.c_str())) return i;
  }
  return -1;  // more open outputs than slots: this one is still removed on errors, not on signals
}

void unregister_temporary(int slot) {
  if (slot >= 0) pending_temporaries[slot].store(nullptr);
}

bool written_in_place(const fs::file_status& status) {
  return fs::is_fifo(status) || fs::is_character_file(status) || fs::is_block_file(status) ||
         fs::is_socket(status);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), target_(path_) {
  std::error_code ec;
  // Where the path leads, links followed: a pipe or terminal behind /dev/stdout is written in
  // place, as the link itself cannot be resolved to a name to rename onto.
  const fs::file_status status = fs::status(path_, ec);
  if (fs::is_directory(status)) throw Error(path_ + ": is a directory; expected a file to write");
  if (written_in_place(status)) {
    out_.open(path_, std::ios::binary);
  } else {
    if (fs::is_symlink(fs::symlink_status(path_, ec))) {
      const fs::path resolved = fs::weakly_canonical(path_, ec);
      if (ec) throw Error(path_ + ": cannot follow the symbolic link: " + ec.message());
      target_ = resolved.string();
    }
    temp_path_ = target_ + ".tmp-" + std::to_string(::getpid());
    signal_slot_ = register_temporary(temp_path_);
    errno = 0;
    out_.open(temp_path_, std::ios::binary | std::ios::trunc);
  }
  if (!out_) {
    const int reason = errno;
    unregister_temporary(signal_slot_);
    throw Error(path_ + ": cannot open for writing" +
                (reason != 0 ? std::string(": ") + std::strerror(reason) : std::string()));
  }
}

AtomicFile::~AtomicFile() {
  if (committed_ || temp_path_.empty()) return;
  out_.close();
  std::error_code ignored;
  fs::remove(temp_path_, ignored);
  unregister_temporary(signal_slot_);
}

void AtomicFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written) throw Error(path_ + ": write failed (disk full?)");
  if (!temp_path_.empty()) {
    std::error_code ec;
    fs::rename(temp_path_, target_, ec);
    if (ec) throw Error(path_ + ": cannot rename temporary into place: " + ec.message());
    unregister_temporary(signal_slot_);
  }
  committed_ = true;
}

}  // namespace hetsim

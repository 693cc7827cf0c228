#include "base/atomic_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "base/error.hpp"

namespace hetsim {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temp_path_(path_ + ".tmp-" + std::to_string(::getpid())) {
  out_.open(temp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error(path_ + ": cannot open for writing");
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::error_code ignored;
  std::filesystem::remove(temp_path_, ignored);
}

void AtomicFile::commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written) throw Error(path_ + ": write failed (disk full?)");
  std::error_code ec;
  std::filesystem::rename(temp_path_, path_, ec);
  if (ec) throw Error(path_ + ": cannot rename temporary into place: " + ec.message());
  committed_ = true;
}

}  // namespace hetsim

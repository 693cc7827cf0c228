#pragma once
// Output that appears whole or not at all: written to "PATH.tmp-PID", renamed onto PATH by
// commit(). Destroying an uncommitted AtomicFile removes the temporary, so an error midway leaves
// no half-written output behind.
#include <fstream>
#include <string>

namespace hetsim {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws Error when the temporary cannot be created
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void commit();  // flushes, closes and renames; throws Error on any I/O failure

 private:
  std::string path_;
  std::string temp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace hetsim

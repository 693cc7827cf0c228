#pragma once
// Output that appears whole or not at all: written to "PATH.tmp-PID", renamed onto PATH by
// commit(). Destroying an uncommitted AtomicFile removes the temporary, so an error midway leaves
// no half-written output behind; so does SIGINT or SIGTERM (the temporary is unlinked, then the
// signal takes its default course).
//
// What PATH names decides how it is written:
// - a regular file or nothing: the temporary and rename above;
// - a symbolic link: followed on purpose; the file it points to is replaced as above and the link
//   stays a link;
// - a FIFO, a character or block device or a socket (`--trace /dev/stdout`, a named pipe): written
//   in place, since renaming a regular file over it would destroy it;
// - a directory: refused.
#include <fstream>
#include <string>

namespace hetsim {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws Error when the output cannot be opened
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void commit();  // flushes, closes and renames; throws Error on any I/O failure

 private:
  std::string path_;       // as given, for messages
  std::string target_;     // the file that ends up holding the output
  std::string temp_path_;  // empty when written in place
  std::ofstream out_;
  int signal_slot_ = -1;   // where the temporary is registered for removal on a signal
  bool committed_ = false;
};

}  // namespace hetsim

#pragma once
// Progress of a sweep on standard error: on a terminal a bar redrawn in place with the points
// done, the rate and the time left; otherwise (a log file, CI) a plain line every twentieth of
// the sweep, so logs stay short.
#include <chrono>
#include <cstddef>
#include <cstdio>

namespace hetsim::sweep {

class SweepProgress {
 public:
  // `total` points, of which `already_done` were finished before this run (--resume).
  SweepProgress(std::size_t total, std::size_t already_done, bool terminal,
                std::FILE* out = stderr);
  void advance(std::size_t points);  // more points finished
  void finish();                     // ends the bar's line

 private:
  void show();
  std::size_t total_;
  std::size_t done_;
  std::size_t done_at_start_;
  std::size_t next_plain_line_;
  bool terminal_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace hetsim::sweep

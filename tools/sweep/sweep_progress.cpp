// Drawing sweep progress.
#include "tools/sweep/sweep_progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace hetsim::sweep {

namespace {

constexpr int kBarWidth = 30;
constexpr std::size_t kPlainLines = 20;
// The bar is redrawn at most this often: a sweep of fast points would otherwise spend its
// time writing to the terminal.
constexpr auto kRedraw = std::chrono::milliseconds(100);

std::string duration_text(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  if (seconds < 3600)
    return fmt::format("{}m{:02}s", static_cast<int>(seconds) / 60, static_cast<int>(seconds) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(seconds) / 3600,
                     static_cast<int>(seconds) % 3600 / 60);
}

}  // namespace

SweepProgress::SweepProgress(std::size_t total, std::size_t already_done, bool terminal,
                             std::FILE* out)
    : total_(total),
      done_(already_done),
      done_at_start_(already_done),
      terminal_(terminal),
      out_(out) {
  const std::size_t step = std::max<std::size_t>(total_ / kPlainLines, 1);
  next_plain_line_ = (done_ / step + 1) * step;
  if (terminal_) show();
}

void SweepProgress::advance(std::size_t points) {
  done_ += points;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (now - last_draw_ >= kRedraw) show();  // finish() draws the last state
    return;
  }
  if (done_ >= next_plain_line_ || done_ == total_) {
    const std::size_t step = std::max<std::size_t>(total_ / kPlainLines, 1);
    next_plain_line_ = (done_ / step + 1) * step;
    show();
  }
}

void SweepProgress::show() {
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::size_t ran = done_ - done_at_start_;
  const double rate = elapsed > 0 ? ran / elapsed : 0;
  const std::string eta = rate > 0 ? duration_text((total_ - done_) / rate) : "?";
  const double fraction = total_ ? static_cast<double>(done_) / total_ : 1;
  if (terminal_) {
    const int filled = static_cast<int>(fraction * kBarWidth);
    fmt::print(out_, "\r[{}{}] {}/{} {:3.0f}% {:.1f} points/s ETA {}   ", std::string(filled, '#'),
               std::string(kBarWidth - filled, ' '), done_, total_, fraction * 100, rate, eta);
  } else {
    fmt::print(out_, "hetsim sweep: {}/{} points ({:.0f}%), {:.1f} points/s, {} left\n", done_,
               total_, fraction * 100, rate, eta);
  }
  std::fflush(out_);
}

void SweepProgress::finish() {
  if (terminal_) {
    show();
    fmt::print(out_, "\n");
  }
}

}  // namespace hetsim::sweep

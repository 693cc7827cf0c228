#include "traces/schedule_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include "base/error.hpp"

namespace hetsim {

namespace {

constexpr std::string_view kKinds = "FBWOR";
constexpr double kMaxCells = 100000.0;

bool is_copy(char kind) { return kind == 'O' || kind == 'R'; }

std::string describe(const TimedOp& op) {
  return fmt::format("{} (rank {}, microbatch {}, chunk {}, [{}, {}])", op.kind, op.rank,
                     op.microbatch, op.chunk, op.start, op.end);
}

}  // namespace

void check_timed_ops(const std::vector<TimedOp>& ops, int ranks) {
  if (ranks < 1) throw Error(fmt::format("schedule drawing: {} ranks; expected at least 1", ranks));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TimedOp& op = ops[i];
    const auto bad = [&](std::string_view expected) {
      throw Error(
          fmt::format("schedule drawing: op {} {}: expected {}", i, describe(op), expected));
    };
    if (op.rank < 0 || op.rank >= ranks) bad(fmt::format("a rank in [0, {})", ranks));
    if (kKinds.find(op.kind) == std::string_view::npos) bad("a kind among F, B, W, O, R");
    if (op.microbatch < 0) bad("a microbatch >= 0");
    if (op.chunk < 0) bad("a chunk >= 0");
    if (!std::isfinite(op.start) || !std::isfinite(op.end) || op.start < 0.0 || op.end < op.start) {
      bad("finite times with 0 <= start <= end");
    }
  }
}

std::string schedule_text(const std::vector<TimedOp>& ops, int ranks, double time_unit) {
  check_timed_ops(ops, ranks);
  if (!std::isfinite(time_unit) || time_unit <= 0.0) {
    throw Error(fmt::format("schedule text: time unit {}; expected a positive number", time_unit));
  }
  double last_end = 0.0;
  bool has_copies = false;
  for (const TimedOp& op : ops) {
    last_end = std::max(last_end, op.end);
    has_copies = has_copies || is_copy(op.kind);
  }
  const double cells_needed = std::ceil(last_end / time_unit);
  if (cells_needed > kMaxCells) {
    throw Error(
        fmt::format("schedule text: {} cells of {} for a schedule ending at {}; expected "
                    "at most {} (choose a larger time unit)",
                    cells_needed, time_unit, last_end, kMaxCells));
  }
  const auto cells = static_cast<std::size_t>(cells_needed);

  // Lines: rank r's compute lane is line 2r (or r without copies), its copy lane 2r + 1.
  const std::size_t lanes = has_copies ? 2 : 1;
  std::vector<std::string> grid(static_cast<std::size_t>(ranks) * lanes, std::string(cells, '.'));

  // Earliest start first, so that on overlap the op that started first keeps the cell; ties in
  // input order keep the result deterministic.
  std::vector<const TimedOp*> order;
  order.reserve(ops.size());
  for (const TimedOp& op : ops) order.push_back(&op);
  std::stable_sort(order.begin(), order.end(),
                   [](const TimedOp* a, const TimedOp* b) { return a->start < b->start; });

  for (const TimedOp* op : order) {
    std::string& line = grid[static_cast<std::size_t>(op->rank) * lanes +
                             (has_copies && is_copy(op->kind) ? 1 : 0)];
    const char letter = op->chunk % 2 == 0
                            ? op->kind
                            : static_cast<char>(std::tolower(static_cast<unsigned char>(op->kind)));
    const char digit = static_cast<char>('0' + op->microbatch % 10);
    // Cells whose midpoint (i + 0.5) * time_unit lies in [start, end).
    const double first = std::max(0.0, std::ceil(op->start / time_unit - 0.5));
    bool first_cell = true;
    for (auto i = static_cast<std::size_t>(first); i < cells; ++i) {
      const double midpoint = (static_cast<double>(i) + 0.5) * time_unit;
      if (midpoint >= op->end) break;
      if (midpoint < op->start) continue;
      if (line[i] == '.') line[i] = first_cell ? letter : digit;
      first_cell = false;
    }
  }

  const std::size_t width = std::to_string(ranks - 1).size();
  std::string out;
  for (int rank = 0; rank < ranks; ++rank) {
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      out += fmt::format("{} {:>{}} |", lane == 0 ? "rank" : "copy", rank, width);
      out += grid[static_cast<std::size_t>(rank) * lanes + lane];
      out += '\n';
    }
  }
  return out;
}

}  // namespace hetsim

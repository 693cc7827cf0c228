#pragma once
// Helpers for schedule tests: per-rank orders as short strings ("F0 F1 B0"), and error text.
#include <string>
#include <vector>

#include "schedules/timetable.hpp"

namespace hetsim::testing {

// "F0 F1 B0 ..." for one rank; with chunks, "F0.1" (microbatch 0, chunk 1).
inline std::string order_of(const Timetable& t, int rank) {
  std::string out;
  for (const ScheduledOp& op : t.ops[rank]) {
    if (!out.empty()) out += ' ';
    out += to_char(op.kind);
    out += std::to_string(op.microbatch);
    if (t.chunks_per_rank > 1) out += "." + std::to_string(op.chunk);
  }
  return out;
}

inline std::vector<std::string> orders_of(const Timetable& t) {
  std::vector<std::string> out;
  for (int rank = 0; rank < t.ranks; ++rank) out.push_back(order_of(t, rank));
  return out;
}

// The message of the exception `run` throws as `E`, or "(no error)".
template <typename E, typename F>
std::string error_text(F&& run) {
  try {
    run();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace hetsim::testing

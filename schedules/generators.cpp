// make_timetable: the generators by name, for the command line and job files.
#include "schedules/generators.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim {

namespace {

void require_chunks(const std::string& kind, int chunks, int expected, const std::string& hint) {
  if (chunks != expected)
    throw PlanError(fmt::format("{}: chunks per rank v must be {} (got {}){}", kind, expected,
                                chunks, hint));
}

}  // namespace

const std::vector<std::string>& timetable_kinds() {
  static const std::vector<std::string> kinds = {"gpipe", "1f1b", "interleaved", "bfs", "zb-h1"};
  return kinds;
}

Timetable make_timetable(const std::string& kind, int ranks, int microbatches, int chunks) {
  if (kind == "gpipe") {
    require_chunks(kind, chunks, 1, "; for a looped GPipe use bfs");
    return make_gpipe(ranks, microbatches);
  }
  if (kind == "1f1b") {
    require_chunks(kind, chunks, 1, "; for chunks use interleaved");
    return make_1f1b(ranks, microbatches);
  }
  if (kind == "zb-h1") {
    require_chunks(kind, chunks, 1, "");
    return make_zb_h1(ranks, microbatches);
  }
  if (kind == "interleaved") return make_interleaved(ranks, microbatches, chunks);
  if (kind == "bfs") return make_looped_bfs(ranks, microbatches, chunks);
  std::string known;
  for (const auto& name : timetable_kinds()) known += (known.empty() ? "" : ", ") + name;
  const std::string guess = nearest_word(kind, timetable_kinds());
  throw PlanError(fmt::format("unknown schedule '{}'{}; known schedules: {}", kind,
                              guess.empty() ? "" : " (did you mean '" + guess + "'?)", known));
}

}  // namespace hetsim

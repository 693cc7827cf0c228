// make_timetable: the generators by name, for the command line and job files.
#include "schedules/generators.hpp"

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/json_input.hpp"
#include "schedules/zb_auto.hpp"

namespace hetsim {

namespace {

void require_chunks(const std::string& kind, int chunks, int expected, const std::string& hint) {
  if (chunks != expected)
    throw PlanError(fmt::format("{}: chunks per rank v must be {} (got {}){}", kind, expected,
                                chunks, hint));
}

}  // namespace

const std::vector<std::string>& timetable_kinds() {
  static const std::vector<std::string> kinds = {"gpipe", "1f1b", "interleaved", "bfs", "zb-h1",
                                                  "zb-h2", "zb-auto", "zb-v",
                                                  "v-half", "v-min", "dualpipe", "dualpipev",
                                                  "seq1f1b", "pipedream", "pipedream-2bw"};
  return kinds;
}

void check_timetable_size(const std::string& kind, int ranks, int microbatches, int chunks) {
  const double ops = 3.0 * ranks * microbatches * chunks;
  if (ops > kMaxTimetableOps)
    throw PlanError(fmt::format("{}: {} ranks x {} microbatches x {} {} make {:.3g} ops; expected at most "
                                "{:.3g}",
                                kind, ranks, microbatches, chunks,
                                kind == "seq1f1b" ? "sequence segments" : "chunks", ops, kMaxTimetableOps));
}

Timetable make_timetable(const std::string& kind, int ranks, int microbatches, int chunks) {
  check_timetable_size(kind, ranks, microbatches, chunks);
  if (kind == "gpipe") {
    require_chunks(kind, chunks, 1, "; for a looped GPipe use bfs");
    return make_gpipe(ranks, microbatches);
  }
  if (kind == "1f1b") {
    require_chunks(kind, chunks, 1, "; for chunks use interleaved");
    return make_1f1b(ranks, microbatches);
  }
  if (kind == "zb-h1" || kind == "zb-h2") {
    require_chunks(kind, chunks, 1, "");
    return kind == "zb-h1" ? make_zb_h1(ranks, microbatches) : make_zb_h2(ranks, microbatches);
  }
  if (kind == "zb-auto") {
    // Unit times, free transfers and ZB-H2's 2p-1 microbatches; other settings through
    // make_zb_auto's options.
    require_chunks(kind, chunks, 1, "");
    return make_zb_auto(ranks, microbatches, ZbAutoOptions{});
  }
  if (kind == "pipedream" || kind == "pipedream-2bw") {
    require_chunks(kind, chunks, 1, "");
    return kind == "pipedream" ? make_pipedream(ranks, microbatches)
                               : make_pipedream_2bw(ranks, microbatches);
  }
  // Seq1F1B has no chunks; its third number is the sequence splits k.
  if (kind == "seq1f1b") return make_seq1f1b(ranks, microbatches, chunks);
  if (kind == "zb-v" || kind == "v-half" || kind == "v-min" || kind == "dualpipe" ||
      kind == "dualpipev") {
    // PyTorch's ScheduleZBVZeroBubble requires exactly two stages per rank; DualPipe's modules
    // are a pair by construction.
    require_chunks(kind, chunks, 2, "; the V and the two directions put two chunks on each rank");
    if (kind == "zb-v") return make_zb_v(ranks, microbatches);
    if (kind == "v-half") return make_v_half(ranks, microbatches);
    if (kind == "v-min") return make_v_min(ranks, microbatches);
    if (kind == "dualpipe") return make_dualpipe(ranks, microbatches);
    return make_dualpipe_v(ranks, microbatches);
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

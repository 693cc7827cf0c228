#include "schedules/timetable_json.hpp"

#include <fmt/format.h>

#include <cctype>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim {

namespace {

constexpr const char* kOpExpected =
    "an op string: F, B or W, then the microbatch, then optionally . and the chunk (\"F3\", "
    "\"B3.1\")";

std::string op_to_string(const ScheduledOp& op, bool with_chunk) {
  return with_chunk ? fmt::format("{}{}.{}", to_char(op.kind), op.microbatch, op.chunk)
                    : fmt::format("{}{}", to_char(op.kind), op.microbatch);
}

// Parses digits at text[pos...]; at most 9 of them so the value fits an int. -1 when none.
int parse_count(const std::string& text, std::size_t& pos) {
  const std::size_t begin = pos;
  int value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) &&
         pos - begin < 9) {
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  return pos == begin ? -1 : value;
}

ScheduledOp parse_op(const JsonInput& in, const Timetable& t) {
  if (!in.value().is_string()) in.fail(kOpExpected);
  const std::string text = in.value().get<std::string>();
  ScheduledOp op;
  if (text.empty()) in.fail(kOpExpected);
  switch (text[0]) {
    case 'F': op.kind = OpKind::kForward; break;
    case 'B': op.kind = OpKind::kBackward; break;
    case 'W': op.kind = OpKind::kWeight; break;
    default: in.fail(kOpExpected);
  }
  std::size_t pos = 1;
  op.microbatch = parse_count(text, pos);
  if (op.microbatch < 0) in.fail(kOpExpected);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    op.chunk = parse_count(text, pos);
    if (op.chunk < 0) in.fail(kOpExpected);
  }
  if (pos != text.size()) in.fail(kOpExpected);
  if (op.microbatch >= t.microbatches)
    in.fail(fmt::format("a microbatch in 0..{} (microbatches = {})", t.microbatches - 1,
                        t.microbatches));
  if (op.chunk >= t.chunks_per_rank)
    in.fail(fmt::format("a chunk in 0..{} (chunks_per_rank = {})", t.chunks_per_rank - 1,
                        t.chunks_per_rank));
  if (op.kind == OpKind::kWeight && !t.split_backward)
    in.fail("F or B (W ops need \"split_backward\": true)");
  return op;
}

// A required count (> 0), or `fallback` when the key is absent and fallback > 0.
int read_count(const JsonInput& root, const std::string& key, long long fallback) {
  const long long v = (root.has(key) || fallback <= 0) ? root.positive_integer(key) : fallback;
  if (v > 1'000'000'000) root.at(key).fail("an integer <= 1000000000");
  return static_cast<int>(v);
}

// An integer in [low, high] at `cell`, or an InputError saying so.
int read_int_in(const JsonInput& cell, long long low, long long high, const std::string& what) {
  const auto& v = cell.value();
  if (!v.is_number_integer() || v.get<long long>() < low || v.get<long long>() > high)
    cell.fail(what);
  return static_cast<int>(v.get<long long>());
}

// Per-rank [i, j] position pairs (Timetable::early_receives, late_sends), written only when given.
void write_links(nlohmann::json& j, const char* key, const std::vector<std::vector<OpLink>>& links) {
  if (links.empty()) return;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : links) {
    nlohmann::json entries = nlohmann::json::array();
    for (const OpLink& e : row) entries.push_back({e.first, e.second});
    rows.push_back(std::move(entries));
  }
  j[key] = std::move(rows);
}

std::vector<std::vector<OpLink>> read_links(const JsonInput& root, const char* key, int ranks,
                                            const char* meaning) {
  std::vector<std::vector<OpLink>> links;
  if (!root.has(key)) return links;
  const JsonInput rows = root.at(key);
  if (rows.array_size() != static_cast<std::size_t>(ranks))
    rows.fail(fmt::format("an array of {} rows of [i, j] entries, one per rank", ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    const JsonInput row = rows.at(static_cast<std::size_t>(rank));
    std::vector<OpLink> entries;
    for (std::size_t i = 0; i < row.array_size(); ++i) {
      const JsonInput entry = row.at(i);
      if (entry.array_size() != 2)
        entry.fail(fmt::format("[i, j]: {}, both positions >= 0", meaning));
      entries.push_back({read_int_in(entry.at(0), 0, 1'000'000'000, "an op position >= 0"),
                         read_int_in(entry.at(1), 0, 1'000'000'000, "an op position >= 0")});
    }
    links.push_back(std::move(entries));
  }
  return links;
}

}  // namespace

nlohmann::json timetable_to_json(const Timetable& t) {
  nlohmann::json j;
  j["kind"] = t.kind;
  j["ranks"] = t.ranks;
  j["microbatches"] = t.microbatches;
  j["chunks_per_rank"] = t.chunks_per_rank;
  j["split_backward"] = t.split_backward;
  j["stage_of"] = t.stage_of;
  // The extensions are written only when they differ from their defaults, so timetables without
  // them read exactly as before.
  if (t.sequence_splits != 1) j["sequence_splits"] = t.sequence_splits;
  if (!t.paths.empty()) j["paths"] = t.paths;
  if (!t.path_of_microbatch.empty()) j["path_of_microbatch"] = t.path_of_microbatch;
  if (!t.overlapped_pairs.empty()) j["overlapped_pairs"] = t.overlapped_pairs;
  write_links(j, "early_receives", t.early_receives);
  write_links(j, "late_sends", t.late_sends);
  if (!t.weight_versions.empty()) j["weight_versions"] = t.weight_versions;
  nlohmann::json ops = nlohmann::json::array();
  const bool with_chunk = t.chunks_per_rank > 1;
  for (const auto& list : t.ops) {
    nlohmann::json row = nlohmann::json::array();
    for (const auto& op : list) row.push_back(op_to_string(op, with_chunk));
    ops.push_back(std::move(row));
  }
  j["ops"] = std::move(ops);
  return j;
}

Timetable timetable_from_json(const nlohmann::json& j, const std::string& file) {
  const JsonInput root(j, file);
  root.reject_unknown_keys({"kind", "ranks", "microbatches", "chunks_per_rank", "split_backward",
                            "stage_of", "ops", "sequence_splits", "paths", "path_of_microbatch",
                            "overlapped_pairs", "early_receives", "late_sends",
                            "weight_versions"});
  Timetable t;
  t.kind = root.string_or("kind", "custom");
  t.ranks = read_count(root, "ranks", 0);
  t.microbatches = read_count(root, "microbatches", 0);
  t.chunks_per_rank = read_count(root, "chunks_per_rank", 1);
  t.split_backward = root.boolean_or("split_backward", false);
  if (static_cast<long long>(t.ranks) * t.chunks_per_rank > 1'000'000'000)
    root.at("chunks_per_rank").fail("ranks * chunks_per_rank <= 1000000000");
  if (root.has("stage_of")) {
    const JsonInput rows = root.at("stage_of");
    if (rows.array_size() != static_cast<std::size_t>(t.ranks))
      rows.fail(fmt::format("an array of {} rows, one per rank", t.ranks));
    for (int rank = 0; rank < t.ranks; ++rank) {
      const JsonInput row = rows.at(static_cast<std::size_t>(rank));
      if (row.array_size() != static_cast<std::size_t>(t.chunks_per_rank))
        row.fail(fmt::format("an array of {} stages, one per chunk", t.chunks_per_rank));
      std::vector<int> stages;
      for (int chunk = 0; chunk < t.chunks_per_rank; ++chunk) {
        const JsonInput cell = row.at(static_cast<std::size_t>(chunk));
        const auto& v = cell.value();
        if (!v.is_number_integer() || v.get<long long>() < 0 ||
            v.get<long long>() >= t.stages())
          cell.fail(fmt::format("a stage index in 0..{}", t.stages() - 1));
        stages.push_back(v.get<int>());
      }
      t.stage_of.push_back(std::move(stages));
    }
  }

  t.sequence_splits = read_count(root, "sequence_splits", 1);
  if (t.microbatches % t.sequence_splits != 0)
    root.at("sequence_splits")
        .fail(fmt::format("a divisor of microbatches ({}): microbatches count sequence segments",
                          t.microbatches));
  if (root.has("paths")) {
    const JsonInput paths = root.at("paths");
    const std::size_t n = paths.array_size();
    if (n == 0) paths.fail("a non-empty array of paths (leave it out for the single path)");
    for (std::size_t i = 0; i < n; ++i) {
      const JsonInput path = paths.at(i);
      const std::size_t len = path.array_size();
      if (len == 0) path.fail("a non-empty array of stages");
      std::vector<int> stages;
      for (std::size_t k = 0; k < len; ++k)
        stages.push_back(read_int_in(path.at(k), 0, t.stages() - 1,
                                     fmt::format("a stage index in 0..{}", t.stages() - 1)));
      t.paths.push_back(std::move(stages));
    }
  }
  if (root.has("path_of_microbatch")) {
    const JsonInput of = root.at("path_of_microbatch");
    if (of.array_size() != static_cast<std::size_t>(t.microbatches))
      of.fail(fmt::format("an array of {} path indices, one per microbatch", t.microbatches));
    const long long last = t.paths.empty() ? 0 : static_cast<long long>(t.paths.size()) - 1;
    for (int mb = 0; mb < t.microbatches; ++mb)
      t.path_of_microbatch.push_back(read_int_in(of.at(static_cast<std::size_t>(mb)), 0, last,
                                                 fmt::format("a path index in 0..{}", last)));
  }
  if (root.has("overlapped_pairs")) {
    const JsonInput rows = root.at("overlapped_pairs");
    if (rows.array_size() != static_cast<std::size_t>(t.ranks))
      rows.fail(fmt::format("an array of {} rows of positions, one per rank", t.ranks));
    for (int rank = 0; rank < t.ranks; ++rank) {
      const JsonInput row = rows.at(static_cast<std::size_t>(rank));
      std::vector<int> positions;
      for (std::size_t i = 0; i < row.array_size(); ++i)
        positions.push_back(read_int_in(row.at(i), 0, 1'000'000'000, "an op position >= 0"));
      t.overlapped_pairs.push_back(std::move(positions));
    }
  }
  t.early_receives = read_links(root, "early_receives", t.ranks, "op i waits for the inputs of op j");
  t.late_sends = read_links(root, "late_sends", t.ranks, "op i's outputs leave when op j is done");
  if (root.has("weight_versions")) {
    const JsonInput versions = root.at("weight_versions");
    if (versions.array_size() != static_cast<std::size_t>(t.ranks))
      versions.fail(fmt::format("an array of {} counts, one per rank", t.ranks));
    for (int rank = 0; rank < t.ranks; ++rank)
      t.weight_versions.push_back(read_int_in(versions.at(static_cast<std::size_t>(rank)), 1,
                                              1'000'000'000, "an integer >= 1"));
  }

  const JsonInput lists = root.at("ops");
  if (lists.array_size() != static_cast<std::size_t>(t.ranks))
    lists.fail(fmt::format("an array of {} op lists, one per rank", t.ranks));
  for (int rank = 0; rank < t.ranks; ++rank) {
    const JsonInput list = lists.at(static_cast<std::size_t>(rank));
    const std::size_t n = list.array_size();
    std::vector<ScheduledOp> ops;
    ops.reserve(n);
    for (std::size_t i = 0; i < n; ++i) ops.push_back(parse_op(list.at(i), t));
    t.ops.push_back(std::move(ops));
  }
  // Every stage runs at least an F and a B of every microbatch on it, so the ops the file lists
  // bound the stage and microbatch counts; checked before anything is sized by them (the looped
  // placement, the validator's op index), which keeps memory proportional to the file.
  long long listed = 0;
  for (const auto& ops : t.ops) listed += static_cast<long long>(ops.size());
  const long long stages = static_cast<long long>(t.ranks) * t.chunks_per_rank;
  if (listed < 2 * stages)
    root.at("chunks_per_rank")
        .fail(fmt::format("at most {} with {} ranks: the ops list {} ops, and each stage runs at "
                          "least an F and a B",
                          listed / (2LL * t.ranks), t.ranks, listed));
  // Without paths each microbatch visits every stage; with them, at least one.
  const long long visited = root.has("paths") ? 1 : stages;
  if (listed < 2 * visited * t.microbatches)
    root.at("microbatches")
        .fail(fmt::format("at most {}: the ops list {} ops, and each microbatch runs an F and a B "
                          "on {}",
                          listed / (2 * visited), listed,
                          root.has("paths") ? std::string("at least one stage")
                                            : fmt::format("every stage ({} here)", stages)));

  if (t.stage_of.empty()) t.stage_of = looped_stage_map(t.ranks, t.chunks_per_rank);
  return t;
}

Timetable load_timetable(const std::string& path) {
  return timetable_from_json(read_json_file(path), path);
}

}  // namespace hetsim

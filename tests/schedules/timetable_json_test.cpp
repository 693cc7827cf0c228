// Timetable JSON: lossless round trip, and bad input named by file and JSON path.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/generators.hpp"
#include "schedules/timetable_json.hpp"
#include "schedules/validator.hpp"

using hetsim::InputError;
using hetsim::Timetable;
using hetsim::testing::error_text;
using nlohmann::json;

namespace {
void check_same(const Timetable& a, const Timetable& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.ranks == b.ranks);
  CHECK(a.microbatches == b.microbatches);
  CHECK(a.chunks_per_rank == b.chunks_per_rank);
  CHECK(a.split_backward == b.split_backward);
  CHECK(a.stage_of == b.stage_of);
  CHECK(a.ops == b.ops);
}
std::string read_error(const std::string& text) {
  return error_text<InputError>([&] { hetsim::timetable_from_json(json::parse(text), "t.json"); });
}
}  // namespace

TEST_CASE("1f1b written as JSON reads back identical") {
  const Timetable t = hetsim::make_1f1b(3, 4);
  const json j = hetsim::timetable_to_json(t);
  CHECK(j.dump() ==
        R"({"chunks_per_rank":1,"kind":"1f1b","microbatches":4,"ops":[["F0","F1","F2","B0","F3","B1",)"
        R"("B2","B3"],["F0","F1","B0","F2","B1","F3","B2","B3"],["F0","B0","F1","B1","F2","B2",)"
        R"("F3","B3"]],"ranks":3,"split_backward":false,"stage_of":[[0],[1],[2]]})");
  check_same(hetsim::timetable_from_json(j, "t.json"), t);
}

TEST_CASE("a split, V-shaped timetable with chunks round-trips") {
  const json j = json::parse(R"({
    "kind": "hand", "ranks": 2, "microbatches": 1, "chunks_per_rank": 2, "split_backward": true,
    "stage_of": [[0, 3], [1, 2]],
    "ops": [["F0.0", "F0.1", "B0.1", "W0.1", "B0.0", "W0.0"],
            ["F0.0", "F0.1", "B0.1", "B0.0", "W0.1", "W0.0"]]})");
  const Timetable t = hetsim::timetable_from_json(j, "t.json");
  CHECK(t.stage(1, 1) == 2);
  CHECK(t.ops[0][3] == hetsim::ScheduledOp{hetsim::OpKind::kWeight, 0, 1});
  hetsim::validate(t);
  check_same(hetsim::timetable_from_json(hetsim::timetable_to_json(t), "again.json"), t);
}

TEST_CASE("optional keys default: kind custom, one chunk, fused backward, looped stages") {
  const Timetable t = hetsim::timetable_from_json(
      json::parse(R"({"ranks": 2, "microbatches": 1, "ops": [["F0","B0"],["F0","B0"]]})"), "t.json");
  CHECK(t.kind == "custom");
  CHECK(t.chunks_per_rank == 1);
  CHECK_FALSE(t.split_backward);
  CHECK(t.stage_of == std::vector<std::vector<int>>{{0}, {1}});
  hetsim::validate(t);
}

TEST_CASE("missing keys, wrong types and unknown keys name the JSON path") {
  CHECK(read_error(R"({"ranks": 2, "microbatches": 1})") ==
        "t.json: /ops: got nothing (missing); expected a value for required member \"ops\"");
  CHECK(read_error(R"({"ranks": "2", "microbatches": 1, "ops": []})") ==
        "t.json: /ranks: got \"2\"; expected an integer");
  CHECK(read_error(R"({"ranks": 0, "microbatches": 1, "ops": []})") ==
        "t.json: /ranks: got 0; expected an integer > 0");
  CHECK(read_error(R"({"ranks": 1, "microbatches": 1, "split_backward": 1, "ops": [[]]})") ==
        "t.json: /split_backward: got 1; expected true or false");
  CHECK(read_error(R"({"ranks": 1, "microbatches": 1, "stageof": [[0]], "ops": [[]]})") ==
        "t.json: /stageof: got unknown key \"stageof\"; expected a known key; did you mean "
        "\"stage_of\"?");
  CHECK(read_error(R"([1, 2])") == "t.json: (document): got [1,2]; expected an object");
}

TEST_CASE("bad op strings name the op's path") {
  const std::string expected_op =
      "expected an op string: F, B or W, then the microbatch, then optionally . and the chunk "
      "(\"F3\", \"B3.1\")";
  const auto with_op = [](const std::string& op) {
    return R"({"ranks": 2, "microbatches": 4, "ops": [["F0"], ["F0", )" + op + "]]}";
  };
  CHECK(read_error(with_op(R"("X3")")) == "t.json: /ops/1/1: got \"X3\"; " + expected_op);
  CHECK(read_error(with_op(R"("F")")) == "t.json: /ops/1/1: got \"F\"; " + expected_op);
  CHECK(read_error(with_op(R"("F1.")")) == "t.json: /ops/1/1: got \"F1.\"; " + expected_op);
  CHECK(read_error(with_op(R"("F1x")")) == "t.json: /ops/1/1: got \"F1x\"; " + expected_op);
  CHECK(read_error(with_op("3")) == "t.json: /ops/1/1: got 3; " + expected_op);
  CHECK(read_error(with_op(R"("B4")")) ==
        "t.json: /ops/1/1: got \"B4\"; expected a microbatch in 0..3 (microbatches = 4)");
  CHECK(read_error(with_op(R"("B1.1")")) ==
        "t.json: /ops/1/1: got \"B1.1\"; expected a chunk in 0..0 (chunks_per_rank = 1)");
  CHECK(read_error(with_op(R"("W1")")) ==
        "t.json: /ops/1/1: got \"W1\"; expected F or B (W ops need \"split_backward\": true)");
}

TEST_CASE("op lists and stage_of must match ranks and chunks") {
  CHECK(read_error(R"({"ranks": 2, "microbatches": 1, "ops": [["F0"]]})") ==
        "t.json: /ops: got [[\"F0\"]]; expected an array of 2 op lists, one per rank");
  CHECK(read_error(R"({"ranks": 2, "microbatches": 1, "ops": [["F0"], "F0"]})") ==
        "t.json: /ops/1: got \"F0\"; expected an array");
  CHECK(read_error(R"({"ranks": 2, "microbatches": 1, "stage_of": [[0], [2]], "ops": [[], []]})") ==
        "t.json: /stage_of/1/0: got 2; expected a stage index in 0..1");
  CHECK(read_error(
            R"({"ranks": 1, "microbatches": 1, "chunks_per_rank": 2, "stage_of": [[0]], "ops": [[]]})") ==
        "t.json: /stage_of/0: got [0]; expected an array of 2 stages, one per chunk");
}

TEST_CASE("load_timetable names an unreadable file") {
  CHECK(error_text<InputError>([] { hetsim::load_timetable("/nonexistent/t.json"); }) ==
        "/nonexistent/t.json: (document): got an unreadable file; expected a readable JSON file");
}

TEST_CASE("paths, overlapped pairs and sequence splits round-trip; an op off its path is named") {
  for (const auto& t : {hetsim::make_dualpipe(4, 8), hetsim::make_seq1f1b(3, 4, 2)}) {
    const auto back = hetsim::timetable_from_json(hetsim::timetable_to_json(t), "t.json");
    CHECK(back.paths == t.paths);
    CHECK(back.path_of_microbatch == t.path_of_microbatch);
    CHECK(back.overlapped_pairs == t.overlapped_pairs);
    CHECK(back.sequence_splits == t.sequence_splits);
    CHECK(back.ops == t.ops);
    CHECK_NOTHROW(hetsim::validate(back));
  }
  const auto plain = hetsim::timetable_to_json(hetsim::make_1f1b(2, 2));
  for (const char* key : {"paths", "path_of_microbatch", "overlapped_pairs", "sequence_splits"})
    CHECK_FALSE(plain.contains(key));
  auto t = hetsim::make_dualpipe(2, 4);
  t.path_of_microbatch[0] = 1;  // mb 0 now belongs on stages 2..3, but runs on stage 0
  CHECK(hetsim::testing::error_text<hetsim::ScheduleError>([&] { hetsim::validate(t); }) ==
        "timetable 'dualpipe': F(mb 0, stage 0) on rank 0 at position 0 is off its microbatch's "
        "path 1");
}

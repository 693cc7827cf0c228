// The JSON-lines file of a sweep: whole lines, a torn last line dropped on reading, and resume
// running only what the file lacks, refusing a file of another sweep.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "tools/sweep/sweep_file.hpp"

using namespace hetsim::sweep;
using nlohmann::json;

namespace {

struct TempFile {
  std::string path =
      (std::filesystem::temp_directory_path() /
       ("hetsim-sweep-file-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
          .string();
  ~TempFile() { std::filesystem::remove(path); }
  static inline int counter = 0;
};

SweepSpec three_points() {
  return parse_sweep_spec(json::parse(R"({"base": {"gbs": 64}, "axes": {"tp": [1, 2, 4]}})"),
                          "spec.json");
}

json point_line(const SweepSpec& spec, std::size_t index) {
  return {{"index", index},
          {"point", spec.point(index)},
          {"error", "reason " + std::to_string(index)}};
}

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE(
    "lines written are read back, and a torn last line is dropped with the bytes before it kept") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
    writer.write(point_line(spec, 2));
    writer.write(point_line(spec, 0));
  }
  const auto whole = std::filesystem::file_size(file.path);
  append(file.path, R"({"index": 1, "point": {"tp")");
  const SweepFile read = read_sweep_file(file.path);
  CHECK(read.torn);
  CHECK(read.whole_bytes == whole);
  CHECK(read.header == sweep_header(spec, Shard{}));
  REQUIRE(read.lines.size() == 2);
  CHECK(read.lines[0] == point_line(spec, 2));

  const auto pending =
      points_to_resume(read, file.path, sweep_header(spec, Shard{}), spec, {0, 1, 2});
  CHECK(pending == std::vector<std::size_t>{1});
}

TEST_CASE("the header names the base job, the point count and the shard") {
  const SweepSpec spec = three_points();
  CHECK(sweep_header(spec, Shard{}) ==
        json::parse(R"({"sweep": {"base": {"gbs": 64}, "points": 3}})"));
  CHECK(sweep_header(spec, Shard{1, 4}) ==
        json::parse(R"({"sweep": {"base": {"gbs": 64}, "points": 3, "shard": "1/4"}})"));
}

TEST_CASE("resume refuses a file of another sweep or with a point the spec does not have there") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
    writer.write(point_line(spec, 1));
  }
  const SweepFile read = read_sweep_file(file.path);
  const SweepSpec other =
      parse_sweep_spec(json::parse(R"({"base": {"gbs": 32}, "axes": {"tp": [1, 2, 4]}})"), "s");
  CHECK_THROWS_WITH_AS(
      points_to_resume(read, "out.jsonl", sweep_header(other, Shard{}), other, {0, 1, 2}),
      doctest::Contains("out.jsonl: line 1: the file holds another sweep"), hetsim::Error);
  const SweepSpec reordered =
      parse_sweep_spec(json::parse(R"({"base": {"gbs": 64}, "axes": {"tp": [4, 1, 2]}})"), "s");
  CHECK_THROWS_WITH_AS(
      points_to_resume(read, "out.jsonl", sweep_header(reordered, Shard{}), reordered, {0, 1, 2}),
      "out.jsonl: line 2: point 1 {\"tp\":2} is not the spec's point of that index; --resume needs "
      "the spec the sweep was started with",
      hetsim::Error);
}

TEST_CASE("a broken line that is not the last is an error naming the file and line") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
  }
  append(file.path, "{\"index\": 0\n");
  append(file.path, point_line(spec, 1).dump() + "\n");
  CHECK_THROWS_WITH_AS(read_sweep_file(file.path),
                       doctest::Contains((file.path + ": line 2: got {\"index\": 0;").c_str()),
                       hetsim::Error);

  const TempFile not_sweep;
  append(not_sweep.path, "{\"iteration_time_s\": 1}\n");
  CHECK_THROWS_WITH_AS(
      read_sweep_file(not_sweep.path),
      doctest::Contains(": line 1: got {\"iteration_time_s\": 1}; expected the header"),
      hetsim::Error);
  const TempFile empty;
  append(empty.path, "");
  CHECK_THROWS_WITH_AS(read_sweep_file(empty.path),
                       (empty.path + ": empty; expected a hetsim sweep file").c_str(),
                       hetsim::Error);
}

TEST_CASE("a duplicated point is refused on resume") {
  const SweepSpec spec = three_points();
  const TempFile file;
  {
    LineWriter writer(file.path, false);
    writer.write(sweep_header(spec, Shard{}));
    writer.write(point_line(spec, 1));
    writer.write(point_line(spec, 1));
  }
  CHECK_THROWS_WITH_AS(points_to_resume(read_sweep_file(file.path), "f",
                                        sweep_header(spec, Shard{}), spec, {0, 1, 2}),
                       "f: line 3: point 1 appears twice", hetsim::Error);
}

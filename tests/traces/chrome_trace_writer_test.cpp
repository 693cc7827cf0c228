// ChromeTraceWriter: the document it streams parses as JSON, holds exactly the events written
// (times in microseconds with nanosecond resolution), is accepted by the trace validator, is
// byte-identical for identical calls, and never appears half-written.
#include "traces/chrome_trace_writer.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/error.hpp"
#include "traces/trace_validator.hpp"

namespace {

namespace fs = std::filesystem;

// A fresh directory per test case, removed afterwards.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("hetsim-writer-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Two ranks of a pipeline: F on rank 0 sends an activation to rank 1 (a flow), with a nested
// kernel slice, string/number args, and a memory counter.
void write_small_trace(const std::string& path) {
  hetsim::ChromeTraceWriter writer(path);
  writer.name_process(0, "node \"a\"", 0);
  writer.name_thread(0, 1, "gpu0 compute", 0);
  writer.name_thread(0, 2, "gpu1 compute", 1);
  const std::array<hetsim::TraceArg, 3> args{hetsim::TraceArg{"microbatch", 3LL},
                                             hetsim::TraceArg{"flops", 1.5e12},
                                             hetsim::TraceArg{"stage", std::string_view("0\n1")}};
  writer.slice(0, 1, "F", "compute", 0.001, 0.0025, args, /*flow_out_id=*/7);
  writer.slice(0, 1, "gemm", "kernel", 0.0012, 0.001, {});
  writer.slice(0, 2, "F", "compute", 0.004, 0.0025, {}, 0, /*flow_in_id=*/7);
  writer.counter(0, "memory", 0.001, "allocated_GiB", 12.25);
  writer.commit();
}

}  // namespace

TEST_CASE("writer output parses as JSON and holds the events written, times in microseconds") {
  const ScratchDir dir("events");
  const std::string path = dir.file("trace.json");
  write_small_trace(path);
  const nlohmann::json doc = nlohmann::json::parse(read_all(path));
  CHECK(doc.at("displayTimeUnit") == "ms");
  const nlohmann::json& events = doc.at("traceEvents");
  REQUIRE(events.size() == 10);

  CHECK(events[0] ==
        nlohmann::json::parse(
            R"({"name":"process_name","ph":"M","pid":0,"args":{"name":"node \"a\""}})"));
  CHECK(events[1] ==
        nlohmann::json::parse(
            R"({"name":"process_sort_index","ph":"M","pid":0,"args":{"sort_index":0}})"));
  CHECK(events[4].at("name") == "thread_name");
  CHECK(events[4].at("tid") == 2);
  CHECK(events[5].at("args").at("sort_index") == 1);

  // 1 ms start and 2.5 ms duration are 1000 us and 2500 us.
  const nlohmann::json& f0 = events[6];
  CHECK(f0.at("ph") == "X");
  CHECK(f0.at("cat") == "compute");
  CHECK(f0.at("ts").get<double>() == doctest::Approx(1000.0));
  CHECK(f0.at("dur").get<double>() == doctest::Approx(2500.0));
  CHECK(f0.at("args").at("microbatch") == 3);
  CHECK(f0.at("args").at("flops").get<double>() == 1.5e12);
  CHECK(f0.at("args").at("stage") == "0\n1");
  CHECK(f0.at("bind_id") == "0x7");
  CHECK(f0.at("flow_out") == true);
  CHECK_FALSE(f0.contains("flow_in"));
  CHECK_FALSE(events[7].contains("args"));
  CHECK_FALSE(events[7].contains("bind_id"));
  CHECK(events[8].at("bind_id") == "0x7");
  CHECK(events[8].at("flow_in") == true);

  const nlohmann::json& counter = events[9];
  CHECK(counter ==
        nlohmann::json::parse(
            R"({"name":"memory","ph":"C","ts":1000.0,"pid":0,"args":{"allocated_GiB":12.25}})"));
}

TEST_CASE("writer output is accepted by the validator with the expected summary") {
  const ScratchDir dir("valid");
  const std::string path = dir.file("trace.json");
  write_small_trace(path);
  const hetsim::TraceSummary summary = hetsim::validate_trace_file(path);
  CHECK(summary.events == 10);
  CHECK(summary.slices == 3);
  CHECK(summary.counters == 1);
  CHECK(summary.flows == 1);
  CHECK(summary.processes == 1);
  CHECK(summary.threads == 2);
}

TEST_CASE("timestamps have three decimals of microseconds; start and end round separately") {
  const ScratchDir dir("format");
  const std::string path = dir.file("trace.json");
  hetsim::ChromeTraceWriter writer(path);
  // 1.23456789 s starts at 1234567.890 us; it ends at 1.23456789 + 2e-9 s = 1234567.892 us.
  writer.slice(3, 4, "x", "c", 1.23456789, 2e-9, {});
  writer.slice(3, 4, "y", "c", 0.0, 0.0, {});
  CHECK(writer.events_written() == 2);
  writer.commit();
  const std::string text = read_all(path);
  CHECK(
      text ==
      "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
      "{\"name\":\"x\",\"cat\":\"c\",\"ph\":\"X\",\"ts\":1234567.890,\"dur\":0.002,\"pid\":3,"
      "\"tid\":4},\n"
      "{\"name\":\"y\",\"cat\":\"c\",\"ph\":\"X\",\"ts\":0.000,\"dur\":0.000,\"pid\":3,\"tid\":4}\n"
      "]}\n");
}

TEST_CASE("control characters in names are escaped as JSON requires") {
  const ScratchDir dir("escape");
  const std::string path = dir.file("trace.json");
  hetsim::ChromeTraceWriter writer(path);
  writer.name_process(1, std::string_view("a\\b\x01\tc", 6), 0);
  writer.commit();
  const nlohmann::json doc = nlohmann::json::parse(read_all(path));
  CHECK(doc.at("traceEvents")[0].at("args").at("name") == std::string("a\\b\x01\tc", 6));
  CHECK(read_all(path).find("\\u0001") != std::string::npos);
}

TEST_CASE("identical calls give byte-identical files") {
  const ScratchDir dir("determinism");
  write_small_trace(dir.file("first.json"));
  write_small_trace(dir.file("second.json"));
  const std::string first = read_all(dir.file("first.json"));
  CHECK(!first.empty());
  CHECK(first == read_all(dir.file("second.json")));
}

TEST_CASE("a writer destroyed without commit leaves no file behind") {
  const ScratchDir dir("abandon");
  const std::string path = dir.file("trace.json");
  {
    hetsim::ChromeTraceWriter writer(path);
    writer.name_process(0, "p", 0);
    for (int i = 0; i < 20000; ++i) writer.slice(0, 0, "op", "c", i * 1e-6, 1e-7, {});
    CHECK(writer.events_written() == 20002);
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("a large trace streams through the buffer and stays valid") {
  const ScratchDir dir("large");
  const std::string path = dir.file("trace.json");
  hetsim::ChromeTraceWriter writer(path);
  writer.name_process(0, "p", 0);
  writer.name_thread(0, 0, "t", 0);
  constexpr int kSlices = 100000;
  for (int i = 0; i < kSlices; ++i) {
    const std::array<hetsim::TraceArg, 1> args{hetsim::TraceArg{"i", static_cast<long long>(i)}};
    writer.slice(0, 0, "op", "c", i * 1e-6, 0.5e-6, args);
  }
  writer.commit();
  const hetsim::TraceSummary summary = hetsim::validate_trace_file(path);
  CHECK(summary.slices == kSlices);
  CHECK(summary.events == kSlices + 4);
}

TEST_CASE("bad writer calls throw before anything is written") {
  const ScratchDir dir("misuse");
  const std::string path = dir.file("trace.json");
  hetsim::ChromeTraceWriter writer(path);
  CHECK_THROWS_WITH_AS(writer.slice(0, 0, "F", "c", -1.0, 1.0, {}),
                       "trace writer: slice start = -1 s; expected a finite time in [0, 9e+09] s",
                       hetsim::Error);
  CHECK_THROWS_WITH_AS(writer.slice(0, 0, "F", "c", 0.0, -0.5, {}),
                       "trace writer: slice \"F\" duration = -0.5 s; expected >= 0", hetsim::Error);
  CHECK_THROWS_WITH_AS(writer.slice(0, 0, "F", "c", 0.0, 1.0, {}, 1, 2),
                       "trace writer: slice \"F\" has both flow_out 1 and flow_in 2; expected at "
                       "most one",
                       hetsim::Error);
  const std::array<hetsim::TraceArg, 1> nan_arg{
      hetsim::TraceArg{"bytes", std::numeric_limits<double>::quiet_NaN()}};
  CHECK_THROWS_WITH_AS(writer.slice(0, 0, "F", "c", 0.0, 1.0, nan_arg),
                       "trace writer: slice \"F\" arg \"bytes\" = nan; expected a finite number",
                       hetsim::Error);
  CHECK_THROWS_WITH_AS(
      writer.counter(0, "mem", 0.0, "GiB", std::numeric_limits<double>::infinity()),
      "trace writer: counter \"mem\" GiB = inf; expected a finite number", hetsim::Error);
  CHECK(writer.events_written() == 0);
  writer.name_process(0, "p", 0);
  writer.commit();
  CHECK(nlohmann::json::parse(read_all(path)).at("traceEvents").size() == 2);
  CHECK_THROWS_AS(writer.name_process(1, "q", 1), hetsim::Error);
  CHECK_THROWS_AS(writer.commit(), hetsim::Error);
}

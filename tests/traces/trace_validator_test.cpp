// validate_trace_file: accepts what Perfetto's JSON importer reads as intended and rejects, with
// a message naming file, JSON path, value and expectation, each broken rule.
#include "traces/trace_validator.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.hpp"

namespace {

namespace fs = std::filesystem;

// Writes `text` to a scratch file that is removed when the case ends.
struct TraceFile {
  std::string path;
  explicit TraceFile(const std::string& text)
      : path((fs::temp_directory_path() /
              ("hetsim-validator-" + std::to_string(::getpid()) + ".json"))
                 .string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TraceFile() {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
};

// The message validate_trace_file throws for `text`, without the leading "FILE: ".
std::string rejection(const std::string& text) {
  const TraceFile file(text);
  try {
    hetsim::validate_trace_file(file.path);
  } catch (const hetsim::InputError& e) {
    const std::string message = e.what();
    REQUIRE(message.rfind(file.path + ": ", 0) == 0);
    CHECK(e.file() == file.path);
    return message.substr(file.path.size() + 2);
  }
  return "accepted";
}

hetsim::TraceSummary summary_of(const std::string& text) {
  const TraceFile file(text);
  return hetsim::validate_trace_file(file.path);
}

// Metadata naming pid 1 and its threads 1 and 2, prepended to the cases below.
const std::string kNames =
    R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"node 0"}},)"
    R"({"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"compute"}},)"
    R"({"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"comm"}},)";

std::string events(const std::string& body) { return R"({"traceEvents":[)" + kNames + body + "]}"; }

}  // namespace

TEST_CASE("a well-formed trace is summarised") {
  // Nested X slices, a B/E pair around them, touching slices, a flow whose flow_in comes first
  // in the file, a counter, an instant and a sort index.
  const hetsim::TraceSummary summary = summary_of(events(
      R"({"ph":"B","name":"step","ts":0,"pid":1,"tid":1},)"
      R"({"ph":"X","name":"F","ts":0,"dur":10,"pid":1,"tid":1,"bind_id":"0x2a","flow_out":true},)"
      R"({"ph":"X","name":"gemm","ts":2,"dur":8.0005,"pid":1,"tid":1},)"
      R"({"ph":"X","name":"B","ts":10,"dur":5,"pid":1,"tid":1},)"
      R"({"ph":"E","ts":20,"pid":1,"tid":1},)"
      R"({"ph":"X","name":"recv","ts":12,"dur":1,"pid":1,"tid":2,"bind_id":42,"flow_in":true},)"
      R"({"ph":"C","name":"memory","ts":3,"pid":1,"args":{"GiB":1.5,"pinned":2}},)"
      R"({"ph":"i","name":"oom","ts":4,"pid":1,"tid":1,"s":"t"},)"
      R"({"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":3}})"));
  CHECK(summary.events == 12);
  CHECK(summary.slices == 5);
  CHECK(summary.counters == 1);
  CHECK(summary.flows == 1);
  CHECK(summary.processes == 1);
  CHECK(summary.threads == 2);
}

TEST_CASE("the array form and extra top-level members are accepted") {
  CHECK(summary_of(R"([{"ph":"M","name":"process_name","pid":7,"args":{"name":"p"}}])").events ==
        1);
  CHECK(summary_of(R"({"otherData":{"traceEvents":1},"traceEvents":[],"displayTimeUnit":"ns"})")
            .events == 0);
}

TEST_CASE("an event without ph is rejected") {
  CHECK(rejection(R"([{"name":"a","ts":1}])") ==
        "/0/ph: got nothing; expected a trace event phase (one of B E X i I C b n e s t f P N O D "
        "M V v R c ( ))");
  CHECK(rejection(events(R"({"ph":"Z","ts":1})")) ==
        "/traceEvents/3/ph: got \"Z\"; expected a trace event phase (one of B E X i I C b n e s t "
        "f P N O D M V v R c ( ))");
}

TEST_CASE("an X event without dur, or with a negative one, is rejected") {
  CHECK(rejection(events(R"({"ph":"X","name":"F","ts":0,"pid":1,"tid":1})")) ==
        "/traceEvents/3/dur: got nothing; expected a number of microseconds >= 0");
  CHECK(rejection(events(R"({"ph":"X","name":"F","ts":0,"dur":-1,"pid":1,"tid":1})")) ==
        "/traceEvents/3/dur: got -1; expected a number of microseconds >= 0");
  CHECK(rejection(events(R"({"ph":"X","name":"F","ts":"0","dur":1,"pid":1,"tid":1})")) ==
        "/traceEvents/3/ts: got \"0\"; expected a number of microseconds");
  CHECK(rejection(events(R"({"ph":"X","name":"F","ts":0,"dur":1,"pid":1})")) ==
        "/traceEvents/3/tid: got nothing; expected an integer or string id");
}

TEST_CASE("slices that partially overlap on one thread are rejected") {
  // [5, 15] starts inside [0, 10] and ends 5 us after it, far beyond the 1e-3 us tolerance.
  CHECK(rejection(events(R"({"ph":"X","name":"F","ts":0,"dur":10,"pid":1,"tid":2},)"
                         R"({"ph":"X","name":"B","ts":5,"dur":10,"pid":1,"tid":2})")) ==
        "/traceEvents/4: got a slice [5.000, 15.000] us on pid 1, tid 2 that starts inside "
        "/traceEvents/3 [0.000, 10.000] us and ends after it; expected slices on one thread to "
        "nest or not overlap");
  // The same two slices on different threads do not interact.
  CHECK(summary_of(events(R"({"ph":"X","name":"F","ts":0,"dur":10,"pid":1,"tid":1},)"
                          R"({"ph":"X","name":"B","ts":5,"dur":10,"pid":1,"tid":2})"))
            .slices == 2);
}

TEST_CASE("unmatched and duplicated flows are rejected") {
  CHECK(
      rejection(events(
          R"({"ph":"X","name":"F","ts":0,"dur":1,"pid":1,"tid":1,"bind_id":"0x2a","flow_out":true})")) ==
      "/traceEvents/3/bind_id: got \"0x2a\" on a flow_out slice that no flow_in slice matches; "
      "expected exactly one flow_in slice with the same bind_id");
  CHECK(
      rejection(events(
          R"({"ph":"X","name":"F","ts":0,"dur":1,"pid":1,"tid":1,"bind_id":5,"flow_in":true})")) ==
      "/traceEvents/3/bind_id: got \"0x5\" on a flow_in slice that no flow_out slice matches; "
      "expected exactly one flow_out slice with the same bind_id");
  CHECK(
      rejection(events(
          R"({"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1,"bind_id":5,"flow_in":true},)"
          R"({"ph":"X","name":"b","ts":2,"dur":1,"pid":1,"tid":1,"bind_id":"5","flow_in":true})")) ==
      "/traceEvents/4/bind_id: got \"0x5\" on a second flow_in slice (the first is "
      "/traceEvents/3); expected exactly one flow_in slice per bind_id");
  CHECK(
      rejection(events(
          R"({"ph":"X","name":"a","ts":0,"dur":1,"pid":1,"tid":1,"bind_id":"xyz","flow_in":true})")) ==
      "/traceEvents/3/bind_id: got \"xyz\"; expected a flow id (an unsigned integer or a "
      "hexadecimal string)");
}

TEST_CASE("an unnamed thread or process is rejected") {
  CHECK(rejection(R"({"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}},)"
                  R"({"ph":"X","name":"F","ts":0,"dur":1,"pid":1,"tid":2}]})") ==
        "/traceEvents/1/tid: got 2; expected a thread_name metadata event for pid 1, tid 2");
  CHECK(rejection(events(R"({"ph":"C","name":"memory","ts":0,"pid":9,"args":{"GiB":1}})")) ==
        "/traceEvents/3/pid: got 9; expected a process_name metadata event for pid 9");
}

TEST_CASE("a file that is not JSON, or not a trace, is rejected") {
  CHECK(rejection("this is not json") ==
        "(document): got text that is not JSON (byte 2); expected a JSON document");
  CHECK(rejection(events(R"({"ph":"X","name":"F","ts":0,)")) ==
        "/traceEvents/3: got text that is not JSON (byte 256); expected a JSON document");
  CHECK(rejection("42") ==
        "(document): got 42; expected an array of events or an object with a \"traceEvents\" "
        "array");
  CHECK(rejection(R"({"events":[]})") ==
        "(document): got an object without \"traceEvents\"; expected an array of events or an "
        "object with a \"traceEvents\" array");
  CHECK(rejection(R"({"traceEvents":{}})") ==
        "/traceEvents: got an object; expected an array of events");
  CHECK(rejection(R"({"traceEvents":[1]})") == "/traceEvents/0: got 1; expected an event object");
  CHECK_THROWS_WITH_AS(hetsim::validate_trace_file("/nonexistent/trace.json"),
                       "/nonexistent/trace.json: (document): got an unreadable file; expected a "
                       "readable trace file",
                       hetsim::InputError);
}

TEST_CASE("B/E pairs must match on their thread") {
  CHECK(rejection(events(R"({"ph":"E","ts":1,"pid":1,"tid":1})")) ==
        "/traceEvents/3: got an E event with no open B on pid 1, tid 1; expected a B event on "
        "the same thread before it");
  CHECK(rejection(events(R"({"ph":"B","name":"s","ts":1,"pid":1,"tid":1},)"
                         R"({"ph":"E","ts":1,"pid":1,"tid":2})")) ==
        "/traceEvents/4: got an E event with no open B on pid 1, tid 2; expected a B event on "
        "the same thread before it");
  CHECK(rejection(events(R"({"ph":"B","name":"s","ts":1,"pid":1,"tid":1})")) ==
        "/traceEvents/3: got a B event that is never closed; expected an E event on the same "
        "thread after it");
  CHECK(rejection(events(R"({"ph":"B","name":"s","ts":5,"pid":1,"tid":1},)"
                         R"({"ph":"E","ts":4,"pid":1,"tid":1})")) ==
        "/traceEvents/4/ts: got 4; expected a time >= 5 us, the ts of its B event /traceEvents/3");
}

TEST_CASE("counters, metadata and instants are checked") {
  CHECK(rejection(events(R"({"ph":"C","name":"memory","ts":0,"pid":1,"args":{"GiB":"lots"}})")) ==
        "/traceEvents/3/args/GiB: got \"lots\"; expected a number");
  CHECK(rejection(events(R"({"ph":"C","name":"memory","ts":0,"pid":1})")) ==
        "/traceEvents/3/args: got nothing; expected an object of numeric series");
  CHECK(rejection(events(R"({"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{}})")) ==
        "/traceEvents/3/args/name: got nothing; expected a string");
  CHECK(rejection(events(
            R"({"ph":"M","name":"process_sort_index","pid":1,"args":{"sort_index":1.5}})")) ==
        "/traceEvents/3/args/sort_index: got 1.5; expected an integer");
  CHECK(rejection(events(R"({"ph":"i","name":"x","ts":0,"pid":1,"tid":1,"s":"q"})")) ==
        "/traceEvents/3/s: got \"q\"; expected \"g\", \"p\" or \"t\"");
}

// A fuzzing finding (tests/fuzz, fuzz_trace): a value nested 200,000 deep in an event overflowed
// the stack when the message rendered it.
TEST_CASE("a trace nested deeper than 64 levels is rejected where it goes too deep") {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK(rejection(R"({"traceEvents":[{"ph":)" + nested(200000) + "}]}") ==
        "/traceEvents/0: got nesting deeper than 64 levels; expected a trace nested at most that deep");
  CHECK(rejection(R"({"other":)" + nested(100) + R"(,"traceEvents":[]})") ==
        "(document): got nesting deeper than 64 levels; expected a trace nested at most that deep");
  // 64 levels in all (the document, traceEvents, the event, args and 60 arrays) are fine.
  const std::string deep_args = events(R"({"ph":"X","name":"F","ts":0,"dur":1,"pid":1,"tid":1,"args":{"a":)" +
                                       nested(60) + "}}");
  CHECK(summary_of(deep_args).slices == 1);
}

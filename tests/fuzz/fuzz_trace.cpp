// libFuzzer target: the Chrome trace checker behind `hetsim validate TRACE`
// (traces/trace_validator.hpp), which streams the file with a SAX parse.
#include <cstdint>

#include "tests/fuzz/fuzz_input.hpp"
#include "traces/trace_validator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  return fuzz::expect_input_errors([&] {
    const TraceSummary summary =
        validate_trace_file(fuzz::scratch().write("trace.json", data, size));
    if (summary.slices + summary.counters > summary.events)
      fuzz::finding("a summary counting more slices and counters than events");
  });
}

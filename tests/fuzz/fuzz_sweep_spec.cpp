// libFuzzer target: sweep spec files (tools/sweep/sweep_spec.hpp). What loads is expanded into
// points; the first few are turned into jobs as `hetsim sweep` does, where a point `run` would
// refuse must fail with a hetsim Error (recorded as that point's error) and never with another
// exception, which the sweep could only report as an internal error.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>

#include "base/error.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "tools/sweep/point_job.hpp"
#include "tools/sweep/sweep_spec.hpp"

namespace {

// Parsing a job registers and parses all of run's options (CLI11): under the sanitizers on a busy
// machine sixteen of them took over libFuzzer's 10 s limit. Four still parse the base job with
// the first values of the fastest-turning axes, or the first points of a list.
constexpr std::size_t kMaxParsedPoints = 4;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  return fuzz::expect_input_errors([&] {
    const sweep::SweepSpec spec =
        sweep::load_sweep_spec(fuzz::scratch().write("sweep.json", data, size));
    if (spec.point_count == 0) fuzz::finding("a spec accepted with no points");
    for (std::size_t i = 0; i < std::min(spec.point_count, kMaxParsedPoints); ++i) {
      try {
        sweep::parse_point_job(spec.job(i));
      } catch (const Error&) {
        // A point `run` would refuse: the sweep records the message as that point's error.
      } catch (const std::exception& e) {
        fuzz::finding(std::string("a point job refused with a non-hetsim exception: ") + e.what());
      }
    }
  });
}

// libFuzzer target: the two CSV readers, kernel timings (models/calibration/csv_table.hpp) and WAN
// bandwidth traces (topologies/bandwidth_variation.hpp), fed the same bytes.
#include <cstdint>

#include "models/calibration/csv_table.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/bandwidth_variation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  fuzz::expect_input_errors([&] {
    const calibration::CsvTable table =
        calibration::CsvTable::parse(fuzz::as_text(data, size), "fuzz.csv");
    for (std::size_t row = 0; row < table.row_count(); ++row)
      if (table.row(row).size() != table.header().size()) fuzz::finding("a row of the wrong width");
  });
  return fuzz::expect_input_errors([&] {
    double previous = -1;
    for (const BandwidthPoint& p :
         load_bandwidth_trace(fuzz::scratch().write("bandwidth.csv", data, size))) {
      fuzz::require_finite(p.bytes_per_s, "a bandwidth");
      if (!(p.bytes_per_s > 0) || !(p.time_s > previous))
        fuzz::finding("a point out of order or <= 0");
      previous = p.time_s;
    }
  });
}

// libFuzzer target: column mappings with the CSV they import (models/calibration/csv_importer.hpp).
// The input is the mapping JSON, a NUL byte, then the CSV text; without a NUL it is all mapping
// and the CSV is empty.
#include <cstdint>
#include <cstring>

#include "base/json_input.hpp"
#include "models/calibration/csv_importer.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t mapping_size = nul ? static_cast<std::size_t>(nul - data) : size;
  const std::string csv = nul ? fuzz::as_text(nul + 1, size - mapping_size - 1) : std::string();
  return fuzz::expect_input_errors([&] {
    const std::string mapping_file = fuzz::scratch().write("mapping.json", data, mapping_size);
    const nlohmann::json mapping = read_json_file(mapping_file);
    for (const auto& m : calibration::import_csv_text(csv, "fuzz.csv", mapping, mapping_file)) {
      fuzz::require_finite(m.seconds, "an imported time");
      if (!(m.seconds > 0)) fuzz::finding("an imported time that is not > 0");
    }
  });
}

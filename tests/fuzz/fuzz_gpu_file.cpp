// libFuzzer target: one GPU catalog file (models/gpu_catalog.hpp), loaded as a catalog of one.
#include <cstdint>

#include "models/gpu_catalog.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  // The catalog reads every *.json of a directory; this one holds only the input.
  static const std::string directory = [] {
    const auto path = fuzz::scratch().path() / "gpus";
    std::filesystem::create_directories(path);
    return path.string();
  }();
  fuzz::scratch().write("gpus/fuzz-gpu.json", data, size);
  return fuzz::expect_input_errors([&] {
    const GpuCatalog catalog = GpuCatalog::load(directory);
    const GpuSpec& gpu = catalog.at("fuzz-gpu");
    for (int d = 0; d < kDtypeCount; ++d) fuzz::require_finite(gpu.peak_flops[d], "a peak");
    fuzz::require_finite(gpu.hbm_bytes, "hbm_bytes");
  });
}

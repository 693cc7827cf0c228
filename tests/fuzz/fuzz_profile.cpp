// libFuzzer target: calibrated profiles (models/calibration/profile.hpp). Properties: what loads
// writes back to the same JSON, and every lookup of an accepted profile is finite and > 0.
#include <cstdint>
#include <optional>

#include "models/calibration/profile.hpp"
#include "tests/fuzz/fuzz_input.hpp"

namespace {

void require_positive(const std::optional<double>& seconds, const char* what) {
  if (!seconds) return;
  hetsim::fuzz::require_finite(*seconds, what);
  if (!(*seconds > 0)) hetsim::fuzz::finding(std::string(what) + " is not > 0");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  using namespace hetsim::calibration;
  return fuzz::expect_input_errors([&] {
    const std::string file = fuzz::scratch().write("profile.json", data, size);
    const Profile profile = Profile::load(file);
    const nlohmann::json written = profile.to_json();
    if (Profile::from_json(written, file).to_json() != written)
      fuzz::finding("a profile that does not read back as written: " + written.dump());
    // Shapes inside, between and outside what a profile measures (a Llama-3-8B layer at 4k
    // tokens, one token, a petabyte).
    for (const double scale : {1.0, 4096.0, 1e15}) {
      require_positive(profile.gemm_seconds(scale, 4096, 4096, Dtype::kBf16), "gemm_seconds");
      require_positive(profile.attention_seconds(false, 1, 32, scale, 128, true, Dtype::kBf16),
                       "attention_seconds");
      require_positive(profile.memory_bound_seconds("rmsnorm", scale), "memory_bound_seconds");
      require_positive(profile.copy_seconds("h2d_pinned", scale), "copy_seconds");
      require_positive(profile.collective_seconds("all_reduce", scale, 8), "collective_seconds");
    }
  });
}

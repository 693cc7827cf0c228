// libFuzzer target: HuggingFace config.json files (models/transformer_config.hpp). What the
// loader accepts must give finite parameter counts.
#include <cstdint>

#include "models/transformer_config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  return fuzz::expect_input_errors([&] {
    const TransformerConfig config =
        load_transformer_config(fuzz::scratch().write("config.json", data, size));
    fuzz::require_finite(config.total_params(), "total_params()");
    fuzz::require_finite(config.active_params(), "active_params()");
  });
}

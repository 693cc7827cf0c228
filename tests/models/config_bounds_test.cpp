// Sizes in a config.json are bounded (far above any published model) so that the products the
// cost model forms stay exact and finite. Each case here was a fuzzing finding (tests/fuzz,
// fuzz_model_config): a size of up to 1e9 was accepted, and 4 x n_embd or heads + 2 x kv_heads
// then overflowed an int.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/models/model_test_support.hpp"

using hetsim::test::message_of;
using hetsim::test::write_temp;

namespace {
// A valid Llama-style config around the field under test.
std::string llama_with(const std::string& fields) {
  return R"({"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
      "intermediate_size": 256, "vocab_size": 100, )" +
         fields + "}";
}
}  // namespace

TEST_CASE(
    "each size field is refused above its bound, naming the file, JSON path, value and bound") {
  const auto hidden =
      write_temp("bound_hidden", R"({"hidden_size": 1048577, "num_attention_heads": 1,
      "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 100})");
  CHECK(message_of(hidden) ==
        hidden + ": /hidden_size: got 1048577; expected an integer in [1, 1048576]");
  const auto gpt2 = write_temp("bound_n_embd", R"({"n_embd": 600000000, "n_head": 1, "n_layer": 1,
      "vocab_size": 10, "n_positions": 8, "n_inner": null})");
  CHECK(message_of(gpt2) == gpt2 + ": /n_embd: got 600000000; expected an integer in [1, 1048576]");
  const auto heads =
      write_temp("bound_heads", R"({"hidden_size": 64, "num_attention_heads": 1000000000,
      "num_key_value_heads": 1000000000, "num_hidden_layers": 2, "intermediate_size": 256,
      "vocab_size": 100, "head_dim": 1})");
  CHECK(message_of(heads) ==
        heads + ": /num_attention_heads: got 1000000000; expected an integer in [1, 65536]");
  const auto layers = write_temp("bound_layers", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 65537, "intermediate_size": 256, "vocab_size": 100})");
  CHECK(message_of(layers) ==
        layers + ": /num_hidden_layers: got 65537; expected an integer in [1, 65536]");
  const auto ffn = write_temp("bound_ffn", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 4194305, "vocab_size": 100})");
  CHECK(message_of(ffn) ==
        ffn + ": /intermediate_size: got 4194305; expected an integer in [1, 4194304]");
  const auto vocab = write_temp("bound_vocab", R"({"hidden_size": 64, "num_attention_heads": 4,
      "num_hidden_layers": 2, "intermediate_size": 256, "vocab_size": 16777217})");
  CHECK(message_of(vocab) ==
        vocab + ": /vocab_size: got 16777217; expected an integer in [1, 16777216]");
  const auto experts = write_temp("bound_experts", llama_with(R"("num_local_experts": 65537,
      "num_experts_per_tok": 2)"));
  CHECK(message_of(experts) ==
        experts + ": /num_local_experts: got 65537; expected an integer in [0, 65536]");
  const auto expert_width = write_temp("bound_expert_width", llama_with(R"("num_experts": 8,
      "num_experts_per_tok": 2, "moe_intermediate_size": 1000000000)"));
  CHECK(message_of(expert_width) ==
        expert_width +
            ": /moe_intermediate_size: got 1000000000; expected an integer in [1, 4194304]");
}

TEST_CASE("an explicit head_dim may widen attention only up to the hidden-size bound") {
  const auto wide = write_temp("bound_head_dim", llama_with(R"("head_dim": 524288)"));
  CHECK(message_of(wide) ==
        wide +
            ": /head_dim: got 524288; expected a head_dim with num_attention_heads "
            "(4) x head_dim <= 1048576");
  // At the bound: accepted, and the parameter count is finite.
  const auto at_bound = hetsim::load_transformer_config(
      write_temp("bound_head_dim_ok", llama_with(R"("head_dim": 262144)")));
  CHECK(at_bound.head_dim() * at_bound.num_heads == 1048576);
  CHECK(std::isfinite(at_bound.total_params()));
}

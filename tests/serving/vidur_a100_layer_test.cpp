// A serving iteration's layer on one A100 80GB for Llama-3-8B, costed from the recorded kernel
// data, against the sum of the measured ops. vidur's mlp.csv (tests/data/vidur, MIT) times one
// Llama-3-8B layer's forward ops in fp16 by token count and TP degree; imported with the shipped
// mapping models/calibration/mappings/vidur_compute.json and fitted into a profile, which the
// replica's stage then uses. The measured layer is the row's QKV, attention-out, gate+up and down
// GEMMs, the two RMSNorms, RoPE, SiLU*mul and two residual adds (the row times one add); the
// attention core is timed apart by vidur, so it is left out on both sides (no prefill, no
// decode keys: ReplicaCost::layer_token_seconds).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "models/calibration/csv_importer.hpp"
#include "models/calibration/curves.hpp"
#include "models/calibration/fit_profile.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/batch_cost.hpp"

using namespace hetsim;
using namespace hetsim::serving;

TEST_CASE("Llama-3-8B on an A100 from vidur's recorded kernels: the layer cost is the per-op sum") {
  const auto measurements = calibration::import_csv(
      test::source_path("tests/data/vidur/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv"),
      test::source_path("models/calibration/mappings/vidur_compute.json"));
  const calibration::Profile profile = calibration::fit_profile(measurements, {});
  const TransformerConfig model = test::shipped_model("llama-3-8b.json");
  StageHardware hw;
  hw.gpu = &test::catalog().at("a100-80gb");
  hw.profile = &profile;
  const ReplicaCost cost(model, Dtype::kFp16, 1, {hw});
  const ReplicaCost roofline(model, Dtype::kFp16, 1, {StageHardware{hw.gpu, nullptr, {}, 0, 0}});
  // Decode-sized, mixed and prefill-sized iterations.
  for (const long tokens : {32L, 256L, 1024L, 4096L}) {
    std::map<std::string, std::vector<double>> row;
    for (const auto& m : measurements)
      if (m.tag("num_tokens") == static_cast<double>(tokens) && m.tag("tp") == 1) row[m.label].push_back(m.seconds);
    REQUIRE(row.size() == 10);
    const auto measured = [&](const std::string& label) { return calibration::median(row.at(label)); };
    const double layer = measured("input_layernorm") + measured("attn_pre_proj") + measured("attn_rope") +
                         measured("attn_post_proj") + measured("post_attention_layernorm") +
                         measured("mlp_up_proj") + measured("mlp_act") + measured("mlp_down_proj") +
                         2 * measured("add");
    const double costed = cost.layer_token_seconds(0, tokens);
    const double plain = roofline.layer_token_seconds(0, tokens);
    const double error = (costed - layer) / layer;
    std::cout << fmt::format("A100 Llama-3-8B layer, {:>5} tokens: measured ops {:8.4f} ms, from the profile "
                             "{:8.4f} ms ({:+.2f}%), roofline alone {:8.4f} ms ({:+.2f}%)\n",
                             tokens, layer * 1e3, costed * 1e3, 100 * error, plain * 1e3,
                             100 * (plain - layer) / layer);
    // The fit smooths repeated and neighbouring shapes; at the measured shapes it stays within 5%.
    CHECK(std::abs(error) < 0.05);
  }
}

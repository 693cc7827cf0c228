// Uneven layer splits: each stage's cost follows its layer count, in the cost model and in a
// serving run; a split that does not fit the stages or the model is refused.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "serving_test_support.hpp"
#include "sim/serving/serving_run.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;

namespace {

constexpr double kEps = 1e-12;

std::vector<StageHardware> a100_stages(int pp) {
  StageHardware hw;
  hw.gpu = &catalog().at("a100-80gb");
  return std::vector<StageHardware>(pp, hw);
}

}  // namespace

TEST_CASE("a stage costs its own layers: 10, 14, 8 of Llama-3-8B's 32") {
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  const ReplicaCost even(model, Dtype::kBf16, 1, a100_stages(3));
  const ReplicaCost uneven(model, Dtype::kBf16, 1, a100_stages(3), {10, 14, 8});
  CHECK(even.split() == std::vector<int>{11, 11, 10});
  CHECK(uneven.split() == std::vector<int>{10, 14, 8});
  IterationWork w;
  w.add_prefill(200, 0, true);
  w.add_decode(300);
  const double layer = uneven.layer_token_seconds(1, w.tokens()) +
                       uneven.prefill_attention_seconds(1, w) +
                       uneven.decode_attention_seconds(1, w);
  // The middle stage holds neither the embedding nor the LM head: layers x one layer.
  CHECK(uneven.stage_seconds(1, w) == doctest::Approx(14 * layer).epsilon(kEps));
  CHECK(even.stage_seconds(1, w) == doctest::Approx(11 * layer).epsilon(kEps));
  CHECK(uneven.stage_seconds(0, w) ==
        doctest::Approx(10 * layer + uneven.embedding_seconds(0, w.tokens())).epsilon(kEps));
  CHECK(uneven.stage_seconds(2, w) ==
        doctest::Approx(8 * layer + uneven.lm_head_seconds(2, w.tokens(), w.sampled_tokens))
            .epsilon(kEps));
}

TEST_CASE("a serving run's stage busy time follows the split") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-1node.json");
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  ServingOptions o;
  o.replicas = 1;
  o.pp = 3;
  const std::vector<Request> one{{0.0, 300, 20}};
  o.layers_per_stage = {10, 14, 8};
  const ServingResult a = simulate_serving(cluster, catalog(), model, one, o);
  o.layers_per_stage = {10, 7, 15};
  const ServingResult b = simulate_serving(cluster, catalog(), model, one, o);
  CHECK(a.replicas[0].stage_layers == std::vector<int>{10, 14, 8});
  // One request: the same iterations in both runs, so the middle stage works twice as long with
  // twice the layers, and the first stage (same layers) as long.
  CHECK(a.replicas[0].iterations == b.replicas[0].iterations);
  CHECK(a.replicas[0].stage_busy_s[1] ==
        doctest::Approx(2 * b.replicas[0].stage_busy_s[1]).epsilon(kEps));
  CHECK(a.replicas[0].stage_busy_s[0] ==
        doctest::Approx(b.replicas[0].stage_busy_s[0]).epsilon(kEps));
}

TEST_CASE("a split that does not fit is refused") {
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  CHECK_THROWS_WITH_AS(ReplicaCost(model, Dtype::kBf16, 1, a100_stages(3), {10, 14, 9}),
                       doctest::Contains("sum to the 32 layers"), PlanError);
  CHECK_THROWS_AS(ReplicaCost(model, Dtype::kBf16, 1, a100_stages(3), {16, 16}), PlanError);
  CHECK_THROWS_AS(ReplicaCost(model, Dtype::kBf16, 1, a100_stages(2), {32, 0}), PlanError);
}

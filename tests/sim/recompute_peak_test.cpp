// Peak activation memory with full recompute: while B recomputes a layer, that layer's full
// activations are live on top of the stored layer inputs (Korthikanti et al. 2022, section 5:
// 2sbhL stored plus one layer's sbh(34 + 5as/h), of which its own input 2sbh is already stored).
// Narayanan et al. (SC'21) Table 1's 1.7B model (24 layers, h 2304, 24 heads, s 2048, V 51200),
// micro-batch 16, tp 1, pp 1 on one DGX A100.
#include <doctest/doctest.h>

#include <string>

#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

TEST_CASE("full recompute peak: stored layer inputs, first/last-stage tensors and one recomputed layer") {
  const std::string root = HETSIM_SOURCE_DIR;
  const GpuCatalog catalog = GpuCatalog::load(root + "/models/gpus");
  const Cluster cluster =
      load_cluster(root + "/topologies/clusters/dgx-a100-1node.json", catalog.keys());
  const TransformerConfig model = load_transformer_config(root + "/models/configs/megatron-gpt-1.7b.json");
  RunOptions o;
  o.plan.micro_batch_size = 16;
  o.plan.global_batch_size = 8 * 16;
  o.plan.seq_length = 2048;
  o.plan.recompute = Recompute::kFull;
  const RunResult r = simulate_training(cluster, catalog, model, o);
  const double s = 2048, b = 16, h = 2304, a = 24, L = 24, V = 51200, sbh = s * b * h;
  const double inputs = L * 2 * sbh;
  const double embedding = sbh;                       // dropout mask
  const double head = 2 * sbh + 2 * sbh + 4 * s * b * V;  // final-norm, LM-head inputs, fp32 logits
  const double recomputed = sbh * (34 + 5 * a * s / h) - 2 * sbh;
  const double expected = inputs + embedding + head + recomputed;
  const double actual = r.memory.front().activation_bytes;
  MESSAGE("peak activations: expected " << expected / 1e9 << " GB (of which the recomputed layer "
                                        << recomputed / 1e9 << " GB), actual " << actual / 1e9
                                        << " GB; static " << r.memory.front().static_bytes / 1e9
                                        << " GB");
  CHECK(std::abs(actual - expected) / expected < 1e-12);
}

// A serving replica's pipeline stage hands its hidden states and residual to the next as vLLM
// does (send_tensor_dict with the TP group as all_gather_group,
// vllm/distributed/parallel_state.py):
// each TP rank sends its 1/tp slice to the same rank of the next stage, all at once, and the next
// stage all-gathers the slices. The slices share whatever links their routes have in common.
#include <doctest/doctest.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "serving_test_support.hpp"
#include "sim/ring_collective.hpp"
#include "sim/serving/serving_run.hpp"

using namespace hetsim;
using namespace hetsim::serving;
using hetsim::test::catalog;

namespace {

// The ring all-gather of a whole tensor of `bytes` over n GPUs on links of bandwidth B and hop
// latency L: (n - 1)/n S/B + (n - 1) L.
double all_gather_s(double bytes, int n, double bandwidth, double latency) {
  return (n - 1.0) / n * bytes / bandwidth + (n - 1) * latency;
}

}  // namespace

TEST_CASE("tp 8 x pp 2 on two DGX A100 nodes: eighths cross eight NICs at once, NVLink gathers") {
  const Cluster cluster = hetsim::test::shipped_cluster("dgx-a100-2node.json");
  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  ServingOptions options;
  options.tp = 8;
  options.pp = 2;
  options.replicas = 1;
  const long prompt = 4096;
  const ServingResult r = simulate_serving(cluster, catalog(), model, {{0.0, prompt, 1}}, options);

  // By hand: stage 0 on node 0 (GPUs 0-7), stage 1 on node 1 (GPUs 8-15). Rank g sends to GPU
  // 8 + g through its own 200 Gb/s NIC; the next node all-gathers on NVLink (230 GB/s, 8 us).
  const double tensor = prompt * 4096 * 2.0;  // [tokens, h] in bf16
  const double nic = 200e9 / 8, latency = cluster.route_latency_s(0, 8);
  const double one_tensor = latency + tensor / 8 / nic + all_gather_s(tensor, 8, 230e9, 8e-6);
  const double hand_over = 2 * one_tensor;  // hidden states, then residual
  StageHardware stage;
  stage.gpu = &catalog().at("a100-80gb");
  stage.tp_links = {230e9, 8e-6};
  const ReplicaCost cost(model, Dtype::kBf16, 8, {stage, stage});
  IterationWork prefill;
  prefill.add_prefill(prompt, 0, true);
  const double expected =
      cost.stage_seconds(0, prefill) + hand_over + cost.stage_seconds(1, prefill);
  // Both tensors whole through GPU 0's NIC, as a single route would carry them.
  const double through_one_nic = latency + 2 * tensor / nic;
  std::printf("hand-over of %ld tokens: %.1f us in slices, %.1f us whole through one NIC\n", prompt,
              hand_over * 1e6, through_one_nic * 1e6);
  CHECK(r.requests[0].first_token_s == doctest::Approx(expected).epsilon(1e-12));
  CHECK(hand_over < through_one_nic / 3);
}

TEST_CASE("slices over one shared machine-to-machine link take as long as the whole tensor would") {
  // Three 8-GPU machines joined by measured pair links: every slice from Virginia to Ohio
  // crosses the same 1.12 Gb/s link, so eight slices move no faster than one whole tensor.
  const Cluster cluster = hetsim::test::shipped_cluster("pair-matrix-3machine.json");
  std::vector<std::pair<GpuId, GpuId>> pairs;
  for (GpuId g = 0; g < 8; ++g) pairs.emplace_back(g, 8 + g);
  const RingBottleneck shared = pairs_bottleneck(cluster, pairs);
  CHECK(shared.bandwidth_bytes_per_s == doctest::Approx(1.12e9 / 8 / 8).epsilon(1e-12));
  CHECK(shared.latency_s == cluster.route_latency_s(0, 8));

  const TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  StageHardware first;
  first.gpu = &catalog().at("v100-16gb");
  first.tp_links = {150e9, 8e-6};
  StageHardware second = first;
  first.next_latency_s = shared.latency_s;
  first.next_bandwidth_bytes_per_s = shared.bandwidth_bytes_per_s;
  const ReplicaCost cost(model, Dtype::kFp16, 8, {first, second});
  IterationWork w;
  w.add_prefill(100, 0, true);
  const double tensor = 100 * 4096 * 2.0;
  const double one_tensor =
      shared.latency_s + tensor / (1.12e9 / 8) + all_gather_s(tensor, 8, 150e9, 8e-6);
  CHECK(cost.transfer_seconds(0, w) == doctest::Approx(2 * one_tensor).epsilon(1e-12));
}

TEST_CASE("a tensor whose elements do not divide by tp is sent whole by every rank, no gather") {
  // Llama-3-8B widened to 4,098 hidden units (heads of 128 kept): one token's 4,098 elements do
  // not split in four.
  TransformerConfig model = hetsim::test::shipped_model("llama-3-8b.json");
  model.hidden_size = 4098;
  model.head_size = 128;
  StageHardware first;
  first.gpu = &catalog().at("a100-80gb");
  first.tp_links = {230e9, 8e-6};
  const StageHardware second = first;
  first.next_latency_s = 24e-6;
  first.next_bandwidth_bytes_per_s = 25e9;
  const ReplicaCost cost(model, Dtype::kBf16, 4, {first, second});
  IterationWork one_token, two_tokens;
  one_token.add_decode(10);
  CHECK(cost.transfer_seconds(0, one_token) ==
        doctest::Approx(2 * (24e-6 + 4098 * 2.0 / 25e9)).epsilon(1e-12));
  // Two tokens' 8,196 elements do: quarters, then an all-gather on the 230 GB/s links.
  two_tokens.add_decode(10);
  two_tokens.add_decode(20);
  const double tensor = 2 * 4098 * 2.0;
  CHECK(cost.transfer_seconds(0, two_tokens) ==
        doctest::Approx(2 * (24e-6 + tensor / 4 / 25e9 + all_gather_s(tensor, 4, 230e9, 8e-6)))
            .epsilon(1e-12));
}

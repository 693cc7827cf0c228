// The plan space: which GPU subsets and which Megatron plans `hetsim plan` considers.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "plan_test_support.hpp"
#include "tools/plan/plan_space.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;
using namespace hetsim::plan;

namespace {

using test::catalog;
using test::kRoot;

ClusterSpec cluster(const std::string& name) {
  return load_cluster_spec(kRoot + "/topologies/clusters/" + name, catalog().keys());
}

}  // namespace

TEST_CASE("a mixed cluster is tried whole and without each GPU type") {
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("mixed-a100-h100.json"), catalog());
  REQUIRE(subsets.size() == 3);
  CHECK(subsets[0].left_out.empty());
  CHECK(subsets[0].gpus == 32);
  CHECK(subsets[0].gpu_types == std::vector<std::string>{"a100-80gb", "h100-sxm"});
  CHECK(subsets[1].left_out == std::vector<std::string>{"dc-a/dgx-a100"});
  CHECK(subsets[1].gpus == 16);
  CHECK(subsets[1].left_out_text == "dc-a/dgx-a100 (16 x a100-80gb)");
  CHECK(subsets[2].left_out == std::vector<std::string>{"dc-a/dgx-h100"});
  // The price of the GPUs used is the catalog's list price times their count.
  CHECK(subsets[1].usd_per_hour == doctest::Approx(16 * catalog().at("h100-sxm").usd_per_hour));
  CHECK(subsets[0].usd_per_hour ==
        doctest::Approx(subsets[1].usd_per_hour + subsets[2].usd_per_hour));
}

TEST_CASE("a cluster with measured pair links is tried whole only") {
  // Before: plan failed with "leave_out: cluster ... has measured pair links".
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("pair-matrix-3machine.json"), catalog());
  REQUIRE(subsets.size() == 1);
  CHECK(subsets[0].left_out.empty());
}

TEST_CASE("three sites give every union of sites their WAN links join") {
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("three-site.json"), catalog());
  // Every WAN link pair is joined in three-site.json, so all 7 non-empty unions remain.
  REQUIRE(subsets.size() == 7);
  CHECK(subsets[0].gpus == 48);
  std::set<int> sizes;
  for (const GpuSubset& s : subsets) sizes.insert(s.gpus);
  CHECK(sizes == std::set<int>{16, 32, 48});
}

TEST_CASE("every candidate divides the heads, the layers, the GPUs and the batch") {
  const TransformerConfig model =
      load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("dgx-a100-1node.json"), catalog());
  PlanSpaceOptions options{"c.json", "m.json", 8, 512, false};
  const std::vector<PlanCandidate> candidates = enumerate_candidates(model, subsets, options);
  REQUIRE(!candidates.empty());
  std::set<std::string> schedules;
  for (const PlanCandidate& c : candidates) {
    CAPTURE(c.text());
    CHECK(model.num_heads % c.tp == 0);
    CHECK(model.num_kv_heads % c.tp == 0);
    CHECK(model.num_layers % (c.pp * c.vpp) == 0);
    CHECK(c.tp * c.pp * c.dp == 8);
    CHECK(8 % (c.mbs * c.dp) == 0);
    CHECK((c.vpp > 1) == (c.schedule == "interleaved"));
    if (c.pp == 1) CHECK(c.schedule == "1f1b");
    if (c.dp == 1) CHECK(c.zero_stage == 0);
    CHECK(!c.balance_layers);          // one GPU type: the even split is the balanced one
    CHECK(c.placement == "megatron");  // one site
    schedules.insert(c.schedule);
  }
  CHECK(schedules == std::set<std::string>{"1f1b", "interleaved", "zb-h1"});
  // The wide space adds schedules, ZeRO stages and offload.
  options.wide = true;
  const std::vector<PlanCandidate> wide = enumerate_candidates(model, subsets, options);
  CHECK(wide.size() > candidates.size());
}

TEST_CASE("interleaving tries every virtual-stage count that divides the layers per rank, up to --max-vpp") {
  // Before: 2 and 4 only, so GPT-3 175B on pp 16 (6 layers a rank) never tried v = 3 or 6.
  const TransformerConfig model =
      load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");  // 16 layers
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("dgx-a100-1node.json"), catalog());
  PlanSpaceOptions options{"c.json", "m.json", 8, 512, false};
  const auto interleaves = [&] {
    std::set<std::pair<int, int>> pp_vpp;
    for (const PlanCandidate& c : enumerate_candidates(model, subsets, options))
      if (c.schedule == "interleaved") pp_vpp.insert({c.pp, c.vpp});
    return pp_vpp;
  };
  CHECK(interleaves() == std::set<std::pair<int, int>>{{2, 2}, {2, 4}, {2, 8}, {4, 2}, {4, 4}, {8, 2}});
  options.max_vpp = 4;
  CHECK(interleaves() == std::set<std::pair<int, int>>{{2, 2}, {2, 4}, {4, 2}, {4, 4}, {8, 2}});
  options.max_vpp = 1;
  CHECK_THROWS_WITH_AS(enumerate_candidates(model, subsets, options),
                       "--max-vpp: got 1; expected 2 to 1024 virtual stages per rank", Error);
}

TEST_CASE("a candidate is the sweep point of run's flags") {
  const PlanCandidate c{0, 2, 1, 4, 1, 1, 2, 1, "interleaved", "selective", 1, 0};
  const GpuSubset subset{{"dc-c/rtx4090"}, "dc-c/rtx4090 (16 x rtx-4090)", 32, 8, {"h100-sxm"}, 0};
  const PlanSpaceOptions options{"c.json", "m.json", 64, 4096, false};
  const nlohmann::json point = c.point(options, subset);
  CHECK(point.at("tp") == 2);
  CHECK(point.at("vpp") == 2);
  CHECK(point.at("schedule") == "interleaved");
  CHECK(point.at("recompute-granularity") == "selective");
  CHECK(point.at("zero-stage") == 1);
  CHECK(point.at("sequence-parallel") == true);
  CHECK(point.at("leave_out") == nlohmann::json{"dc-c/rtx4090"});
  CHECK(c.text() == "tp2 pp4 dp1 vpp2 mbs1 interleaved rc=selective zero1");
  CHECK(!point.contains("cp"));  // cp 1 points read as before
  CHECK(!point.contains("ep"));
}

TEST_CASE("a global batch of zero is refused") {
  const TransformerConfig model =
      load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("dgx-a100-1node.json"), catalog());
  CHECK_THROWS_WITH_AS(enumerate_candidates(model, subsets, {"c", "m", 0, 512, false}),
                       "--gbs: got 0; expected a global batch size >= 1", Error);
}

TEST_CASE("mixed GPU types add balanced layers, three sites the site-aware placement") {
  const TransformerConfig model =
      load_transformer_config(kRoot + "/models/configs/llama-3-8b.json");
  // 96 divides over the 48 GPUs of all three sites (dp 3, 6, 12 ...), as over 32 and 16.
  const PlanSpaceOptions options{"c.json", "m.json", 96, 4096, false};
  const std::vector<GpuSubset> mixed = gpu_subsets(cluster("mixed-a100-h100.json"), catalog());
  bool balanced_on_mixed = false;
  for (const PlanCandidate& c : enumerate_candidates(model, mixed, options)) {
    CAPTURE(c.text());
    if (c.balance_layers) {
      CHECK(c.subset == 0);  // only the subset with both GPU types
      CHECK(c.pp > 1);
      CHECK(c.vpp == 1);
      balanced_on_mixed = true;
    }
  }
  CHECK(balanced_on_mixed);
  const std::vector<GpuSubset> sites = gpu_subsets(cluster("three-site.json"), catalog());
  std::set<std::size_t> site_aware_subsets;
  for (const PlanCandidate& c : enumerate_candidates(model, sites, options))
    if (c.placement == "site-aware") site_aware_subsets.insert(c.subset);
  std::set<std::size_t> multi_site;
  for (std::size_t s = 0; s < sites.size(); ++s)
    if (sites[s].sites > 2) multi_site.insert(s);
  CHECK(site_aware_subsets == multi_site);
  CHECK(multi_site.size() == 1);  // all three sites
}

TEST_CASE("context parallelism 2 and 4 join the space from 16k tokens, inside a node") {
  const TransformerConfig model =
      load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("dgx-a100-1node.json"), catalog());
  const auto cps_at = [&](int seq) {
    std::set<int> cps;
    for (const PlanCandidate& c :
         enumerate_candidates(model, subsets, {"c.json", "m.json", 8, seq, false})) {
      CAPTURE(c.text());
      CHECK(c.tp * c.cp * c.pp * c.dp == 8);
      CHECK(8 % (c.tp * c.cp) == 0);  // the ring inside the node
      CHECK(seq % (2 * c.cp) == 0);   // 2 cp chunks per sequence
      CHECK(8 % (c.mbs * c.dp) == 0);
      if (c.cp > 1) {
        CHECK(c.point({"c.json", "m.json", 8, seq, false}, subsets[c.subset]).at("cp") == c.cp);
        CHECK(c.text().find(fmt::format(" cp{} ", c.cp)) != std::string::npos);
      }
      cps.insert(c.cp);
    }
    return cps;
  };
  CHECK(cps_at(kContextParallelMinSeqLength / 2) == std::set<int>{1});
  CHECK(cps_at(kContextParallelMinSeqLength) == std::set<int>{1, 2, 4});
  // ZeRO shards over dp x cp: a cp 2 plan with dp 1 still tries ZeRO 1.
  bool zero_over_cp = false;
  for (const PlanCandidate& c : enumerate_candidates(
           model, subsets, {"c.json", "m.json", 8, kContextParallelMinSeqLength, false}))
    zero_over_cp = zero_over_cp || (c.cp > 1 && c.dp == 1 && c.zero_stage == 1);
  CHECK(zero_over_cp);
}

TEST_CASE("no context parallelism for a sliding-window model") {
  // The ring does not model windows (cost_chunk refuses cp > 1 for them): Llama-3.2-1B with a
  // 4,096-token window stays at cp 1 at 32k tokens.
  TransformerConfig model = load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");
  model.sliding_window = 4096;
  const std::vector<GpuSubset> subsets = gpu_subsets(cluster("dgx-a100-1node.json"), catalog());
  const std::vector<PlanCandidate> candidates =
      enumerate_candidates(model, subsets, {"c.json", "m.json", 8, 32768, false});
  REQUIRE(!candidates.empty());
  for (const PlanCandidate& c : candidates) CHECK(c.cp == 1);
}

TEST_CASE("MoE models also try expert parallelism over 2, 4 and 8 data-parallel replicas, DualPipe and DualPipeV") {
  const TransformerConfig model = load_transformer_config(kRoot + "/models/configs/mixtral-8x7b.json");
  const PlanSpaceOptions options{kRoot + "/topologies/clusters/dgx-h100-4node.json",
                                 kRoot + "/models/configs/mixtral-8x7b.json", 64, 4096, false};
  const auto subsets = gpu_subsets(load_cluster_spec(options.cluster_file, test::catalog().keys()), test::catalog());
  std::set<int> eps;
  int dualpipe = 0, dualpipev = 0;
  for (const PlanCandidate& c : enumerate_candidates(model, subsets, options)) {
    eps.insert(c.ep);
    if (c.schedule == "dualpipe") {
      ++dualpipe;
      CHECK(c.vpp == 2);
      CHECK(c.pp % 2 == 0);
      CHECK(c.microbatches(options.global_batch_size) >= 2 * c.pp);
    }
    if (c.schedule == "dualpipev") {
      ++dualpipev;
      CHECK(c.vpp == 2);
      CHECK(c.pp >= 2);
      CHECK(c.microbatches(options.global_batch_size) >= 2 * c.pp);
      CHECK(model.num_layers % (2 * c.pp) == 0);
    }
    CHECK(model.num_experts % c.ep == 0);
    CHECK(c.dp % c.ep == 0);
    if (c.ep > 1) {
      CHECK(c.cp == 1);
      const nlohmann::json point = c.point(options, subsets[c.subset]);
      CHECK(point.at("ep") == c.ep);
      CHECK(c.text().find(fmt::format(" dp{} ep{} ", c.dp, c.ep)) != std::string::npos);
    }
  }
  CHECK(eps == std::set<int>{1, 2, 4, 8});
  CHECK(dualpipe > 0);
  CHECK(dualpipev > 0);
  // A dense model keeps ep 1 and the schedules it had.
  const TransformerConfig dense = load_transformer_config(kRoot + "/models/configs/llama-3-8b.json");
  for (const PlanCandidate& c : enumerate_candidates(dense, subsets, options)) {
    CHECK(c.ep == 1);
    CHECK(c.schedule != "dualpipe");
    CHECK(c.schedule != "dualpipev");
  }
}

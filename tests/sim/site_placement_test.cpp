// Site placement (sim/site_placement.hpp): the search orders the sites so that tensor- and
// data-parallel rings stay off the WAN and the pipeline boundaries cross the fastest WAN links.
// Crossings are checked here on the cluster's own routes, GPU pair by GPU pair, independently of
// the search's per-site bookkeeping.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "sim/site_placement.hpp"
#include "topologies/cluster_loader.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
using test::shipped_catalog;
using test::shipped_cluster;
const std::string& kRoot = test::source_root();

// Writes `document` to a temporary cluster file and loads it.
Cluster load_written(const nlohmann::json& document, const std::string& name) {
  const auto path =
      std::filesystem::temp_directory_path() / ("hetsim_site_placement_" + name + ".json");
  std::ofstream(path) << document.dump(2);
  return load_cluster(path.string(), shipped_catalog().keys());
}

// three-site.json with its sites listed dc-a, dc-c, dc-b: the file order chains the pipeline
// over the two 10 Gbit/s links instead of one of them and the 100 Gbit/s dc-a--dc-b link.
const Cluster& three_site_c_between() {
  static const Cluster c = [] {
    nlohmann::json d =
        nlohmann::json::parse(std::ifstream(kRoot + "/topologies/clusters/three-site.json"));
    d["name"] = "three-site-c-between";
    std::swap(d["sites"][1], d["sites"][2]);
    return load_written(d, "three_site_c_between");
  }();
  return c;
}

// Per-iteration traffic of llama-3-8b at tp 8 with sequence parallelism, 16 microbatches of 1 x
// 4096 tokens (as tests/sim/three_site_run_test.cpp): each GPU sends its 4 MiB activation shard
// forward and its gradient back per microbatch, 4 MiB x 2 x 16 = 128 MiB per boundary; gradients
// about 8e9 params / (tp 8 x pp) x 4 B (fp32); tensor-parallel payload a round 1 GB.
PlacementTraffic llama_traffic(int pp) {
  PlacementTraffic t;
  t.tensor_parallel_bytes = 1e9;
  t.gradient_bytes.assign(static_cast<std::size_t>(pp), 8e9 / (8.0 * pp) * 4);
  t.activation_bytes = 4.0 * 1024 * 1024 * 2 * 16;
  return t;
}

bool crosses_wan(const Cluster& c, GpuId from, GpuId to) {
  for (const LinkId l : c.route(from, to))
    if (c.links()[l].link_class == LinkClass::kWan) return true;
  return false;
}

// Hops that cross a WAN link: of the tensor-parallel rings, the data-parallel rings (over the
// replicas of each rank and tp index) and the pipeline boundaries (rank r to r + 1 of a replica).
struct WanHops {
  int tensor_parallel = 0;
  int data_parallel = 0;
  int pipeline = 0;
};
WanHops wan_hops(const Cluster& c, const Placement& p) {
  WanHops h;
  for (int r = 0; r < p.pp; ++r)
    for (int d = 0; d < p.dp; ++d)
      for (int t = 0; t < p.tp; ++t) {
        h.tensor_parallel += crosses_wan(c, p.gpu(d, r, t), p.gpu(d, r, (t + 1) % p.tp));
        h.data_parallel += crosses_wan(c, p.gpu(d, r, t), p.gpu((d + 1) % p.dp, r, t));
        if (r + 1 < p.pp) h.pipeline += crosses_wan(c, p.gpu(d, r, t), p.gpu(d, r + 1, t));
      }
  return h;
}

// Names of the sites holding each pipeline rank, "dc-a" or "dc-a+dc-b" when a rank spans sites.
std::vector<std::string> rank_sites(const Cluster& c, const Placement& p) {
  std::vector<std::string> names;
  for (int r = 0; r < p.pp; ++r) {
    std::vector<int> sites;
    for (int d = 0; d < p.dp; ++d)
      for (int t = 0; t < p.tp; ++t) {
        const int s = c.gpu(p.gpu(d, r, t)).site;
        if (std::find(sites.begin(), sites.end(), s) == sites.end()) sites.push_back(s);
      }
    std::string name;
    for (const int s : sites) name += (name.empty() ? "" : "+") + c.sites()[s].name;
    names.push_back(name);
  }
  return names;
}

void print(const Cluster& c, const SitePlacementReport& report) {
  for (std::size_t i = 0; i < report.candidates.size(); ++i) {
    const SiteOrderScore& s = report.candidates[i];
    std::string order;
    for (const int site : s.site_order) order += (order.empty() ? "" : ",") + c.sites()[site].name;
    std::printf("%s %-20s WAN %.4f s %.0f B (tp %.0f, dp %.0f, pp %.0f) USD %.4f%s\n",
                c.name().c_str(), order.c_str(), s.wan_seconds, s.wan_bytes,
                s.tensor_parallel_wan_bytes, s.gradient_wan_bytes, s.activation_wan_bytes,
                s.wan_usd, i == report.chosen ? "  <- chosen" : "");
  }
}

// A permutation placement keeps every GPU exactly once.
void check_is_permutation(const Cluster& c, const Placement& p) {
  if (p.order.empty()) return;
  std::vector<int> seen(static_cast<std::size_t>(c.gpu_count()), 0);
  for (const GpuId g : p.order) ++seen.at(static_cast<std::size_t>(g));
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}
}  // namespace

TEST_CASE("site placement: an empty order is Megatron's default rank order") {
  const Placement p{8, 3, 2};
  CHECK(p.gpu(0, 0, 0) == 0);
  CHECK(p.gpu(1, 0, 7) == 15);
  CHECK(p.gpu(1, 2, 3) == 3 + 8 * (1 + 2 * 2));
  Placement reordered{2, 1, 2, {3, 2, 1, 0}};
  CHECK(reordered.gpu(0, 0, 1) == 2);
  CHECK(reordered.worker_gpus(1) == std::vector<int>{1, 0});
}

TEST_CASE(
    "site placement on two-site-wan, tp 8 x pp 2 x dp 2: file order kept, only pipeline on the "
    "WAN") {
  const Cluster& c = shipped_cluster("two-site-wan");
  SitePlacementReport report;
  const Placement p = place_across_sites(c, 8, 2, 2, llama_traffic(2), &report);
  print(c, report);
  // Both orders load the one WAN link the same way: the tie keeps the file order.
  REQUIRE(report.candidates.size() == 2);
  CHECK(report.chosen == 0);
  CHECK(p.order.empty());
  CHECK(rank_sites(c, p) == std::vector<std::string>{"dc-a", "dc-b"});
  const WanHops hops = wan_hops(c, p);
  CHECK(hops.tensor_parallel == 0);
  CHECK(hops.data_parallel == 0);
  CHECK(hops.pipeline == 8 * 2);  // tp 8 x dp 2 GPU pairs across the one boundary
  // 16 GPU pairs x 128 MiB, half each way, over 100 Gbit/s per direction.
  const double bytes = 16 * 128.0 * 1024 * 1024;
  const SiteOrderScore& s = report.candidates[0];
  CHECK(s.wan_bytes == bytes);
  CHECK(s.activation_wan_bytes == bytes);
  CHECK(s.wan_seconds == doctest::Approx(bytes / 12.5e9).epsilon(1e-12));
  CHECK(s.wan_usd == doctest::Approx(bytes * 0.02e-9).epsilon(1e-12));
  CHECK_FALSE(s.tensor_parallel_crosses_wan);
  CHECK_FALSE(s.data_parallel_crosses_wan);
}

TEST_CASE("site placement on three-site, tp 8 x pp 3 x dp 2: the file order is already optimal") {
  const Cluster& c = shipped_cluster("three-site");
  SitePlacementReport report;
  const Placement p = place_across_sites(c, 8, 3, 2, llama_traffic(3), &report);
  print(c, report);
  CHECK(report.exhaustive);
  CHECK(report.candidates.size() == 6);
  // dc-a, dc-b, dc-c crosses one 100 and one 10 Gbit/s link, the best any order does; the orders
  // that tie with it come later in the search.
  CHECK(report.chosen == 0);
  CHECK(p.order.empty());
  CHECK(rank_sites(c, p) == std::vector<std::string>{"dc-a", "dc-b", "dc-c"});
  for (const SiteOrderScore& s : report.candidates)
    CHECK(s.wan_seconds >= report.candidates[0].wan_seconds * (1 - 1e-9));
  const WanHops hops = wan_hops(c, p);
  CHECK(hops.tensor_parallel == 0);
  CHECK(hops.data_parallel == 0);
  CHECK(hops.pipeline == 2 * 16);
  // 16 GPU pairs x 128 MiB per boundary, one boundary on 100 Gbit/s, one on 10 Gbit/s.
  const double boundary = 16 * 128.0 * 1024 * 1024;
  CHECK(report.candidates[0].wan_seconds ==
        doctest::Approx(boundary / 12.5e9 + boundary / 1.25e9).epsilon(1e-12));
  // The 4 GiB tests/sim/three_site_run_test.cpp measures in the replay of this plan.
  CHECK(report.candidates[0].wan_bytes == 4.0 * 1024 * 1024 * 1024);
}

TEST_CASE("site placement on three-site listed dc-a, dc-c, dc-b: the search moves dc-c last") {
  const Cluster& c = three_site_c_between();
  const PlacementTraffic traffic = llama_traffic(3);
  SitePlacementReport report;
  const Placement p = place_across_sites(c, 8, 3, 2, traffic, &report);
  print(c, report);
  const Placement identity{8, 3, 2};
  CHECK(rank_sites(c, identity) == std::vector<std::string>{"dc-a", "dc-c", "dc-b"});
  // The first best order in the search: site indexes 0, 2, 1 of this file.
  CHECK(report.candidates[report.chosen].site_order == std::vector<int>{0, 2, 1});
  CHECK(rank_sites(c, p) == std::vector<std::string>{"dc-a", "dc-b", "dc-c"});
  check_is_permutation(c, p);
  const WanHops hops = wan_hops(c, p);
  CHECK(hops.tensor_parallel == 0);
  CHECK(hops.data_parallel == 0);
  CHECK(hops.pipeline == 2 * 16);
  // The file order puts both boundaries on 10 Gbit/s links; the chosen one only the second.
  const double boundary = 16 * 128.0 * 1024 * 1024;
  const SiteOrderScore before = score_placement(c, identity, traffic);
  const SiteOrderScore after = score_placement(c, p, traffic);
  std::printf("three-site-c-between: WAN expected %.4f s -> %.4f s, actual %.4f s -> %.4f s\n",
              2 * boundary / 1.25e9, boundary / 1.25e9 + boundary / 12.5e9, before.wan_seconds,
              after.wan_seconds);
  CHECK(before.wan_seconds == doctest::Approx(2 * boundary / 1.25e9).epsilon(1e-12));
  CHECK(after.wan_seconds == doctest::Approx(boundary / 1.25e9 + boundary / 12.5e9).epsilon(1e-12));
  CHECK(after.wan_seconds == doctest::Approx(report.candidates[report.chosen].wan_seconds));
  CHECK(before.wan_seconds == doctest::Approx(report.candidates[0].wan_seconds));
  CHECK(after.wan_bytes == before.wan_bytes);
}

TEST_CASE("site placement never scores worse than the file order") {
  for (const Cluster* c :
       {&shipped_cluster("two-site-wan"), &shipped_cluster("three-site"), &three_site_c_between()}) {
    const int gpus = c->gpu_count();
    for (const auto& [tp, pp] :
         std::vector<std::pair<int, int>>{{8, 1}, {8, 2}, {4, 4}, {8, gpus / 8}, {2, 2}}) {
      if (gpus % (tp * pp) != 0) continue;
      const int dp = gpus / (tp * pp);
      CAPTURE(c->name());
      const int tp_captured = tp, pp_captured = pp;
      CAPTURE(tp_captured);
      CAPTURE(pp_captured);
      const PlacementTraffic traffic = llama_traffic(pp);
      SitePlacementReport report;
      const Placement p = place_across_sites(*c, tp, pp, dp, traffic, &report);
      check_is_permutation(*c, p);
      const SiteOrderScore chosen = score_placement(*c, p, traffic);
      const SiteOrderScore identity = score_placement(*c, Placement{tp, pp, dp}, traffic);
      CHECK(chosen.wan_seconds <= identity.wan_seconds * (1 + 1e-9));
      for (const SiteOrderScore& s : report.candidates)
        CHECK(chosen.wan_seconds <= s.wan_seconds * (1 + 1e-9));
      CHECK_FALSE(chosen.tensor_parallel_crosses_wan);
      // Rings stay off the WAN whenever every site holds whole pipeline ranks.
      if (c->gpu_count() / static_cast<int>(c->sites().size()) % (tp * dp) == 0)
        CHECK(wan_hops(*c, p).data_parallel == 0);
    }
  }
}

TEST_CASE("site placement: whether data parallelism crosses the WAN depends on site sizes only") {
  // three-site, tp 8 x pp 2 x dp 3: a rank needs 24 GPUs and every site has 16, so in any order
  // the middle site is split between the ranks and some data-parallel ring crosses the WAN; the
  // search then puts dc-a and dc-b, joined by the fast link, next to each other.
  const Cluster& c = shipped_cluster("three-site");
  SitePlacementReport report;
  const Placement p = place_across_sites(c, 8, 2, 3, llama_traffic(2), &report);
  print(c, report);
  for (const SiteOrderScore& s : report.candidates) {
    CHECK(s.data_parallel_crosses_wan);
    CHECK_FALSE(s.tensor_parallel_crosses_wan);
  }
  const std::vector<int>& order = report.candidates[report.chosen].site_order;
  CHECK(order[1] != 2);  // dc-c at an end: the middle site borders dc-a and dc-b
  CHECK(wan_hops(c, p).tensor_parallel == 0);
}

TEST_CASE("site placement is deterministic") {
  const Cluster& c = three_site_c_between();
  SitePlacementReport first_report;
  SitePlacementReport second_report;
  const Placement first = place_across_sites(c, 8, 3, 2, llama_traffic(3), &first_report);
  const Placement second = place_across_sites(c, 8, 3, 2, llama_traffic(3), &second_report);
  CHECK(first.order == second.order);
  CHECK(first_report.chosen == second_report.chosen);
  REQUIRE(first_report.candidates.size() == second_report.candidates.size());
  for (std::size_t i = 0; i < first_report.candidates.size(); ++i) {
    CHECK(first_report.candidates[i].site_order == second_report.candidates[i].site_order);
    CHECK(first_report.candidates[i].wan_seconds == second_report.candidates[i].wan_seconds);
  }
}

TEST_CASE(
    "site placement beyond 8 sites: file order and greedy chains find the fast ring of links") {
  // Nine one-GPU sites, every pair joined by a WAN link of 10 ms; the pairs along the chain
  // 0-2-4-6-8-1-3-5-7 have 100 Gbit/s, the others 1 Gbit/s (a scenario, not measured links).
  const std::vector<int> chain = {0, 2, 4, 6, 8, 1, 3, 5, 7};
  nlohmann::json d =
      nlohmann::json::parse(std::ifstream(kRoot + "/topologies/clusters/two-site-wan.json"));
  nlohmann::json site = d["sites"][0];
  site["node_groups"][0]["count"] = 1;
  site["node_groups"][0]["gpus_per_node"] = 1;
  // Appended, not "s" + std::to_string(s): GCC 12 warns falsely on that form (-Wrestrict, GCC
  // bug 105329).
  const auto site_name = [](int s) {
    std::string name = "s";
    name += std::to_string(s);
    return name;
  };
  d["name"] = "nine-site";
  d["sites"] = nlohmann::json::array();
  d["wan_links"] = nlohmann::json::array();
  for (int s = 0; s < 9; ++s) {
    site["name"] = site_name(s);
    d["sites"].push_back(site);
  }
  for (int a = 0; a < 9; ++a)
    for (int b = a + 1; b < 9; ++b) {
      const auto at = [&](int s) {
        return std::find(chain.begin(), chain.end(), s) - chain.begin();
      };
      const bool fast = std::abs(at(a) - at(b)) == 1;
      d["wan_links"].push_back(
          {{"sites", nlohmann::json::array({site_name(a), site_name(b)})},
           {"bandwidth_Gbps", fast ? 100 : 1},
           {"latency_ms", 10},
           {"egress_usd_per_GB", 0.02}});
    }
  // Route over direct links only (least latency: every direct link is 10 ms, every detour 20+),
  // so the fast links form the one fast ring; routed for large messages, the slow pairs would
  // detour over the fast links.
  d["wan_routing"] = {{"message_MiB", 0}};
  const Cluster c = load_written(d, "nine_site");
  PlacementTraffic traffic;
  traffic.activation_bytes = 1e9;
  SitePlacementReport report;
  const Placement p = place_across_sites(c, 1, 9, 1, traffic, &report);
  print(c, report);
  CHECK_FALSE(report.exhaustive);
  CHECK(report.candidates.size() <= 10);
  CHECK(report.candidates[0].site_order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(report.candidates[report.chosen].site_order == chain);
  CHECK(p.order == chain);  // one GPU per site: GPU id = site index
  // 8 boundaries of 1e9 B (half each way) on 100 Gbit/s links.
  CHECK(report.candidates[report.chosen].wan_seconds ==
        doctest::Approx(8 * 1e9 / 12.5e9).epsilon(1e-12));
}

TEST_CASE("site placement rejects plans it cannot place") {
  const Cluster& c = shipped_cluster("three-site");
  CHECK_THROWS_WITH_AS(
      place_across_sites(c, 3, 1, 16, {}),
      "tp 3 does not divide the GPUs of every node (8 GPUs on dc-a/dgx0 and 5 more "
      "nodes): a tensor-parallel group must sit inside one node",
      PlanError);
  CHECK_THROWS_WITH_AS(place_across_sites(c, 8, 2, 2, {}),
                       "tp 8 x pp 2 x dp 2 = 32 GPUs; the cluster has 48", PlanError);
  PlacementTraffic wrong_ranks;
  wrong_ranks.gradient_bytes = {1, 2};
  CHECK_THROWS_WITH_AS(place_across_sites(c, 8, 3, 2, wrong_ranks),
                       "the traffic gives gradient bytes for 2 pipeline ranks; pp is 3", PlanError);
  PlacementTraffic negative;
  negative.activation_bytes = -1;
  CHECK_THROWS_WITH_AS(place_across_sites(c, 8, 3, 2, negative),
                       "placement traffic of -1 bytes; expected a finite number >= 0", PlanError);
  CHECK_THROWS_AS(place_across_sites(c, 0, 3, 2, {}), PlanError);
}

TEST_CASE("on a pair-link matrix the search orders machines: the pipeline takes the fastest pairs") {
  // pair-matrix-3machine.json (Yuan et al. 2022's AWS measurements) with its machines listed
  // Virginia, Oregon, Ohio: the file order chains a 3-stage pipeline over Virginia-Oregon (0.79
  // Gbit/s) and Oregon-Ohio (1.10); Virginia-Ohio-Oregon uses 1.12 and 1.10. With A bytes each
  // way per boundary, the WAN seconds are A (1/0.79 + 1/1.10) against A (1/1.12 + 1/1.10) (per
  // GB/s, both directions), and the search must move Ohio to the middle. Before, one site meant
  // one order: the search could not tell the machines apart.
  nlohmann::json doc;
  std::ifstream(kRoot + "/topologies/clusters/pair-matrix-3machine.json") >> doc;
  auto& groups = doc["sites"][0]["node_groups"];
  std::swap(groups[1], groups[2]);  // virginia, oregon, ohio
  const Cluster cluster = load_written(doc, "pair_matrix_reordered");
  REQUIRE(cluster.has_pair_links());
  PlacementTraffic traffic;
  traffic.activation_bytes = 8e9;  // per GPU, both ways
  SitePlacementReport report;
  const Placement placement = place_across_sites(cluster, 8, 3, 1, traffic, &report);
  CHECK(report.machines);
  CHECK(report.exhaustive);
  REQUIRE(report.candidates.size() == 6);  // 3! orders of the machines
  const std::vector<int> chosen = report.candidates[report.chosen].site_order;
  std::vector<std::string> names;
  for (int node : chosen) names.push_back(cluster.node_name(node));
  std::printf("pair-matrix, machines Virginia, Oregon, Ohio: chosen %s -> %s -> %s, %.3f WAN s against %.3f s in file order\n",
              names[0].c_str(), names[1].c_str(), names[2].c_str(), report.candidates[report.chosen].wan_seconds,
              report.candidates[0].wan_seconds);
  CHECK(names == std::vector<std::string>{"aws/virginia0", "aws/ohio0", "aws/oregon0"});
  // Every GPU pair across a boundary: 8 pairs x A/2 each way x 2 directions per boundary.
  const double per_gbps = 8 * traffic.activation_bytes / (1e9 / 8);
  CHECK(report.candidates[0].wan_seconds == doctest::Approx(per_gbps * (1 / 0.79 + 1 / 1.10)).epsilon(1e-9));
  CHECK(report.candidates[report.chosen].wan_seconds ==
        doctest::Approx(per_gbps * (1 / 1.12 + 1 / 1.10)).epsilon(1e-9));
  // Pipeline rank 1 runs on Ohio's GPUs.
  CHECK(cluster.node_name(cluster.gpu(placement.gpu(0, 1, 0)).node) == "aws/ohio0");
}

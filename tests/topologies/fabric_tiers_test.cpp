// Switch tiers above the nodes (sites[].fabric.tiers, topologies/README.md "Switch tiers"): the
// links each tier adds, the routes that cross them, and every class of bad input, messages pinned.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/cluster_impl.hpp"
#include "topologies/cluster_loader.hpp"

using hetsim::Cluster;
using hetsim::LinkId;
using hetsim::test::kGpuTypes;
using hetsim::test::load_error;
using hetsim::test::write_scratch_file;
using nlohmann::json;

namespace {

// Five nodes of 8 GPUs, one 400 Gbit/s (50 GB/s) NIC per GPU. Tier 0: rail-optimised leaves over
// pairs of nodes, non-blocking; tier 1: groups of 4 nodes, 1:7 above them. The fifth node is a
// group of one at both tiers.
const char* kTiered = R"({
  "name": "tiered",
  "sites": [
    { "name": "dc", "fabric": { "latency_us": 0.0, "tiers": [
        { "nodes_per_group": 2, "rail_optimized": true, "oversubscription": 1, "latency_us": 1.0 },
        { "nodes_per_group": 4, "oversubscription": 7, "latency_us": 2.0, "source": "test" } ] },
      "node_groups": [ { "name": "n", "count": 5, "gpu": "h100-sxm", "gpus_per_node": 8,
        "intra_node": { "bandwidth_GBps": 450, "latency_us": 8.0 },
        "nic": { "bandwidth_Gbps": 400, "latency_us": 24.0 } } ] } ] })";

constexpr double kNic = 50e9;  // 400 Gbit/s in bytes/s

std::string edited(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(kTiered);
  edit(doc);
  return write_scratch_file(name, doc.dump(2));
}

const Cluster& tiered() {
  static const Cluster cluster =
      hetsim::load_cluster(edited("tiered.json", [](json&) {}), kGpuTypes);
  return cluster;
}

hetsim::GpuId gpu(int node, int index) { return node * 8 + index; }

std::vector<std::string> link_names(const Cluster& c, std::span<const LinkId> route) {
  std::vector<std::string> names;
  for (const LinkId id : route) names.emplace_back(c.links()[id].name);
  return names;
}

}  // namespace

TEST_CASE("each tier adds an uplink and a downlink per group (per rail when rail-optimised)") {
  const auto& fabric = tiered().impl().site_fabrics.at(0);
  REQUIRE(fabric.tiers.size() == 2);
  CHECK(fabric.tiers[0].uplinks.size() == 3 * 8);  // groups {0,1} {2,3} {4}, 8 rails each
  CHECK(fabric.tiers[1].uplinks.size() == 2);      // groups {0..3} {4}
  const auto& links = tiered().links();
  // A rail of a pair of nodes: two NICs, non-blocking.
  const hetsim::Link& rail = links[fabric.tiers[0].uplinks[3]];
  CHECK(rail.name == "dc/tier0/group0/rail3/uplink");
  CHECK(rail.bandwidth_bytes_per_s == doctest::Approx(2 * kNic).epsilon(1e-15));
  CHECK(rail.latency_s == doctest::Approx(0.5e-6).epsilon(1e-15));
  CHECK(rail.link_class == hetsim::LinkClass::kFabric);
  // Four nodes' 32 NICs over 7; the partial last group has one node's 8 NICs over 7.
  CHECK(links[fabric.tiers[1].downlinks[0]].name == "dc/tier1/group0/downlink");
  CHECK(links[fabric.tiers[1].uplinks[0]].bandwidth_bytes_per_s ==
        doctest::Approx(32 * kNic / 7).epsilon(1e-15));
  CHECK(links[fabric.tiers[1].uplinks[1]].bandwidth_bytes_per_s ==
        doctest::Approx(8 * kNic / 7).epsilon(1e-15));
  CHECK(links[fabric.tiers[1].uplinks[1]].latency_s == doctest::Approx(1e-6).epsilon(1e-15));
}

TEST_CASE("routes climb the tiers whose groups they leave, and only those") {
  const Cluster& c = tiered();
  // Same rail, same leaf group: one leaf switch, no tier link.
  CHECK(link_names(c, c.route(gpu(0, 3), gpu(1, 3))) ==
        std::vector<std::string>{"dc/n0/gpu3->dc/fabric", "dc/fabric->dc/n1/gpu3"});
  CHECK(c.route_latency_s(gpu(0, 3), gpu(1, 3)) == doctest::Approx(24e-6).epsilon(1e-12));
  // Another rail in the same leaf group: up rail 3's leaf, down rail 5's.
  CHECK(link_names(c, c.route(gpu(0, 3), gpu(1, 5))) ==
        std::vector<std::string>{"dc/n0/gpu3->dc/fabric", "dc/tier0/group0/rail3/uplink",
                                 "dc/tier0/group0/rail5/downlink", "dc/fabric->dc/n1/gpu5"});
  CHECK(c.route_latency_s(gpu(0, 3), gpu(1, 5)) == doctest::Approx(25e-6).epsilon(1e-12));
  // Another leaf group inside the tier-1 group: tier 0 only.
  CHECK(link_names(c, c.route(gpu(1, 0), gpu(2, 0))) ==
        std::vector<std::string>{"dc/n1/gpu0->dc/fabric", "dc/tier0/group0/rail0/uplink",
                                 "dc/tier0/group1/rail0/downlink", "dc/fabric->dc/n2/gpu0"});
  // Another tier-1 group: both tiers, the 1:7 uplink included.
  CHECK(link_names(c, c.route(gpu(3, 2), gpu(4, 2))) ==
        std::vector<std::string>{"dc/n3/gpu2->dc/fabric", "dc/tier0/group1/rail2/uplink",
                                 "dc/tier1/group0/uplink", "dc/tier1/group1/downlink",
                                 "dc/tier0/group2/rail2/downlink", "dc/fabric->dc/n4/gpu2"});
  CHECK(c.route_latency_s(gpu(3, 2), gpu(4, 2)) == doctest::Approx(27e-6).epsilon(1e-12));
  // Inside a node the tiers play no part.
  CHECK(c.route(gpu(4, 0), gpu(4, 7)).size() == 2);
}

TEST_CASE("a route to another site leaves every tier of its own site") {
  const std::string path = edited("tiered-two-sites.json", [](json& d) {
    json b = d["sites"][0];
    b["name"] = "dc-b";
    b["fabric"].erase("tiers");
    b["node_groups"][0]["count"] = 1;
    d["sites"].push_back(b);
    d["wan_links"] = json::array({{{"sites", {"dc", "dc-b"}},
                                   {"bandwidth_Gbps", 100},
                                   {"latency_ms", 10},
                                   {"egress_usd_per_GB", 0}}});
  });
  const Cluster c = hetsim::load_cluster(path, kGpuTypes);
  CHECK(link_names(c, c.route(gpu(0, 1), gpu(5, 1))) ==
        std::vector<std::string>{"dc/n0/gpu1->dc/fabric", "dc/tier0/group0/rail1/uplink",
                                 "dc/tier1/group0/uplink", "dc->dc-b",
                                 "dc-b/fabric->dc-b/n0/gpu1"});
  CHECK(link_names(c, c.route(gpu(5, 1), gpu(0, 1))) ==
        std::vector<std::string>{"dc-b/n0/gpu1->dc-b/fabric", "dc-b->dc",
                                 "dc/tier1/group0/downlink", "dc/tier0/group0/rail1/downlink",
                                 "dc/fabric->dc/n0/gpu1"});
}

TEST_CASE("bad tiers: one line naming the file, the JSON path, the value and what was expected") {
  const std::string at = ": /sites/0/fabric/tiers";
  const std::string missing = edited("tier-missing.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][1].erase("oversubscription");
  });
  CHECK(load_error(missing) ==
        missing + at +
            "/1/oversubscription: got nothing (missing); expected a value for "
            "required member \"oversubscription\"");
  const std::string zero = edited("tier-zero-ratio.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][1]["oversubscription"] = 0;
  });
  CHECK(load_error(zero) == zero + at + "/1/oversubscription: got 0; expected a number > 0");
  const std::string negative = edited("tier-negative-ratio.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][0]["oversubscription"] = -7;
  });
  CHECK(load_error(negative) ==
        negative + at + "/0/oversubscription: got -7; expected a number > 0");
  const std::string huge = edited("tier-huge-ratio.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][1]["oversubscription"] = 1e308;
  });
  CHECK(load_error(huge) == huge + at + "/1/oversubscription: got 1e+308; expected a ratio of at most 1e+06");
  const std::string nesting = edited("tier-not-nesting.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][1]["nodes_per_group"] = 3;
  });
  CHECK(load_error(nesting) == nesting + at +
                                   "/1/nodes_per_group: got 3; expected a multiple of tier 0's "
                                   "nodes_per_group (2), so that groups nest");
  const std::string zero_nodes = edited("tier-zero-nodes.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][0]["nodes_per_group"] = 0;
  });
  CHECK(load_error(zero_nodes) ==
        zero_nodes + at + "/0/nodes_per_group: got 0; expected an integer > 0");
  const std::string fraction = edited("tier-fraction.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][0]["nodes_per_group"] = 2.5;
  });
  CHECK(load_error(fraction) == fraction + at + "/0/nodes_per_group: got 2.5; expected an integer");
  const std::string latency = edited(
      "tier-latency.json", [](json& d) { d["sites"][0]["fabric"]["tiers"][0]["latency_us"] = -1; });
  CHECK(load_error(latency) == latency + at + "/0/latency_us: got -1; expected a number between 0 and 1e+07");
  const std::string rail = edited("tier-rail.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"][0]["rail_optimized"] = "yes";
  });
  CHECK(load_error(rail) == rail + at + "/0/rail_optimized: got \"yes\"; expected true or false");
  const std::string empty =
      edited("tier-empty.json", [](json& d) { d["sites"][0]["fabric"]["tiers"] = json::array(); });
  CHECK(load_error(empty) ==
        empty + at +
            ": got []; expected a non-empty array of switch tiers, leaves first "
            "(leave tiers out for one switch)");
  const std::string typo = edited("tier-typo.json", [](json& d) {
    auto& tier = d["sites"][0]["fabric"]["tiers"][1];
    tier["oversubscribtion"] = tier["oversubscription"];
    tier.erase("oversubscription");
  });
  CHECK(load_error(typo).find(typo + at + "/1/oversubscribtion: ") == 0);
  CHECK(load_error(typo).find("did you mean \"oversubscription\"?") != std::string::npos);
  const std::string object = edited("tier-object.json", [](json& d) {
    d["sites"][0]["fabric"]["tiers"] = {{"nodes_per_group", 2}};
  });
  CHECK(load_error(object) == object + at + ": got {\"nodes_per_group\":2}; expected an array");
}

TEST_CASE("the shipped Llama 3 RoCE pods: racks of two nodes, 1:7 above 3,072-GPU pods") {
  const Cluster c =
      hetsim::load_cluster(hetsim::test::shipped_cluster("meta-roce-h100-768node.json"), kGpuTypes);
  CHECK(c.gpu_count() == 6144);
  const auto& fabric = c.impl().site_fabrics.at(0);
  REQUIRE(fabric.tiers.size() == 2);
  CHECK(fabric.tiers[0].uplinks.size() == 384);  // racks
  CHECK(fabric.tiers[1].uplinks.size() == 2);    // pods
  CHECK(c.links()[fabric.tiers[0].uplinks[0]].bandwidth_bytes_per_s ==
        doctest::Approx(16 * kNic).epsilon(1e-15));
  CHECK(c.links()[fabric.tiers[1].uplinks[1]].bandwidth_bytes_per_s ==
        doctest::Approx(3072 * kNic / 7).epsilon(1e-15));
  // Last GPU of pod 0 to first of pod 1: rack and pod uplinks, then down again.
  CHECK(c.route(3071, 3072).size() == 6);
  CHECK(c.route(0, 8).size() == 2);  // the other node of the rack: one ToR
}

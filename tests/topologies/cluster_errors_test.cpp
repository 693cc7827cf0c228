// Bad cluster files: each class of mistake gives an InputError naming the file, the JSON path,
// the value and what was expected. The messages are pinned here.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.hpp"
#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/cluster_loader.hpp"

using hetsim::test::kGpuTypes;
using hetsim::test::write_scratch_file;
using nlohmann::json;

namespace {

// Two sites of one node group each, joined by one WAN link: every key of the format appears.
const char* kValid = R"({
  "name": "base", "description": "valid starting point", "source": "test",
  "sites": [
    { "name": "dc-a", "fabric": { "latency_us": 1.0, "source": "s" },
      "node_groups": [ { "name": "dgx", "count": 2, "gpu": "h100-sxm", "gpus_per_node": 8,
        "intra_node": { "bandwidth_GBps": 450, "latency_us": 8.0, "source": "s" },
        "nic": { "bandwidth_Gbps": 400, "latency_us": 24.0, "source": "s" } } ] },
    { "name": "dc-b", "fabric": { "latency_us": 1.0 },
      "node_groups": [ { "name": "dgx", "count": 1, "gpu": "a100-80gb", "gpus_per_node": 8,
        "intra_node": { "bandwidth_GBps": 300, "latency_us": 8.0 },
        "nic": { "bandwidth_Gbps": 200, "latency_us": 24.0 } } ] } ],
  "wan_links": [ { "sites": ["dc-a", "dc-b"], "bandwidth_Gbps": 100, "latency_ms": 20,
                   "egress_usd_per_GB": 0.02, "source": "s" } ] })";

struct Outcome {
  std::string path;     // the scratch file written
  std::string message;  // what() of the InputError, or "(no error)"
};

// Writes kValid changed by `edit` to a scratch file named `name` and loads it.
Outcome load_edited(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(kValid);
  edit(doc);
  const std::string path = write_scratch_file(name, doc.dump(2));
  return {path, hetsim::test::load_error(path)};
}

}  // namespace

TEST_CASE("the unedited file loads") {
  const Outcome ok = load_edited("valid.json", [](json&) {});
  CHECK(ok.message == "(no error)");
}

TEST_CASE("unreadable and non-JSON files") {
  CHECK_THROWS_WITH_AS(hetsim::load_cluster("/nonexistent/cluster.json", kGpuTypes),
                       "/nonexistent/cluster.json: (document): got an unreadable file; expected a "
                       "readable JSON file",
                       hetsim::InputError);
  const std::string path = write_scratch_file("not-json.json", "{ \"name\": \"x\", sites ]");
  CHECK_THROWS_WITH_AS(hetsim::load_cluster(path, kGpuTypes),
                       (path + ": (document): got text that is not JSON (byte 16); expected a JSON "
                               "document").c_str(),
                       hetsim::InputError);
}

TEST_CASE("a missing field names its JSON path") {
  const Outcome o = load_edited("missing.json", [](json& d) {
    d["sites"][0]["node_groups"][0]["nic"].erase("bandwidth_Gbps");
  });
  CHECK(o.message == o.path +
                         ": /sites/0/node_groups/0/nic/bandwidth_Gbps: got nothing (missing); "
                         "expected a value for required member \"bandwidth_Gbps\"");
  const Outcome fabric = load_edited("missing-fabric.json", [](json& d) { d["sites"][1].erase("fabric"); });
  CHECK(fabric.message == fabric.path +
                              ": /sites/1/fabric: got nothing (missing); expected a value for "
                              "required member \"fabric\"");
}

TEST_CASE("a value of the wrong type") {
  const Outcome count = load_edited("type-count.json", [](json& d) {
    d["sites"][0]["node_groups"][0]["count"] = "4";
  });
  CHECK(count.message == count.path + ": /sites/0/node_groups/0/count: got \"4\"; expected an integer");
  const Outcome sites = load_edited("type-sites.json", [](json& d) { d["sites"] = {{"a", 1}}; });
  CHECK(sites.message == sites.path + ": /sites: got {\"a\":1}; expected an array");
  const Outcome end = load_edited("type-wan-end.json", [](json& d) { d["wan_links"][0]["sites"][1] = 2; });
  CHECK(end.message == end.path + ": /wan_links/0/sites/1: got 2; expected a site name (a string)");
}

TEST_CASE("bandwidths and latencies outside what a real link has") {
  const Outcome zero = load_edited("zero-bw.json", [](json& d) {
    d["sites"][0]["node_groups"][0]["intra_node"]["bandwidth_GBps"] = 0;
  });
  CHECK(zero.message == zero.path +
                            ": /sites/0/node_groups/0/intra_node/bandwidth_GBps: got 0; expected a number "
                            "between 1.25e-07 and 1.25e+06");
  const Outcome negative = load_edited("negative-bw.json", [](json& d) {
    d["wan_links"][0]["bandwidth_Gbps"] = -100;
  });
  CHECK(negative.message ==
        negative.path + ": /wan_links/0/bandwidth_Gbps: got -100; expected a number between 1e-06 and 1e+07");
  // A denormal bandwidth is > 0 but made every route through it cost infinity.
  const Outcome tiny = load_edited("denormal-bw.json", [](json& d) {
    d["sites"][1]["node_groups"][0]["nic"]["bandwidth_Gbps"] = 1e-320;
  });
  CHECK(tiny.message == tiny.path +
                            ": /sites/1/node_groups/0/nic/bandwidth_Gbps: got 1e-320; expected a "
                            "number between 1e-06 and 1e+07");
  const Outcome latency = load_edited("negative-latency.json", [](json& d) {
    d["sites"][1]["fabric"]["latency_us"] = -1.5;
  });
  CHECK(latency.message ==
        latency.path + ": /sites/1/fabric/latency_us: got -1.5; expected a number >= 0");
  const Outcome slow = load_edited("huge-nic-latency.json", [](json& d) {
    d["sites"][0]["node_groups"][0]["nic"]["latency_us"] = 24e9;
  });
  CHECK(slow.message == slow.path +
                            ": /sites/0/node_groups/0/nic/latency_us: got 24000000000.0; expected a number "
                            "between 0 and 1e+07");
  const Outcome wan = load_edited("negative-wan-latency.json", [](json& d) {
    d["wan_links"][0]["latency_ms"] = -20;
  });
  CHECK(wan.message == wan.path + ": /wan_links/0/latency_ms: got -20; expected a number between 0 and 10000");
}

TEST_CASE("an unknown GPU type suggests the nearest catalog name") {
  const Outcome o = load_edited("gpu.json", [](json& d) { d["sites"][1]["node_groups"][0]["gpu"] = "a100-80g"; });
  CHECK(o.message == o.path +
                         ": /sites/1/node_groups/0/gpu: got \"a100-80g\"; expected a GPU type of "
                         "the catalog (h100-sxm, a100-80gb); did you mean \"a100-80gb\"?");
  const Outcome far = load_edited("gpu-far.json", [](json& d) { d["sites"][0]["node_groups"][0]["gpu"] = "tpu-v5"; });
  CHECK(far.message == far.path +
                           ": /sites/0/node_groups/0/gpu: got \"tpu-v5\"; expected a GPU type of "
                           "the catalog (h100-sxm, a100-80gb)");
}

TEST_CASE("an unknown key suggests the nearest known one") {
  const Outcome o = load_edited("key.json", [](json& d) {
    auto& nic = d["sites"][0]["node_groups"][0]["nic"];
    nic["bandwith_Gbps"] = nic["bandwidth_Gbps"];
    nic.erase("bandwidth_Gbps");
  });
  CHECK(o.message == o.path +
                         ": /sites/0/node_groups/0/nic/bandwith_Gbps: got unknown key "
                         "\"bandwith_Gbps\"; expected a known key; did you mean \"bandwidth_Gbps\"?");
  const Outcome unit = load_edited("key-unit.json", [](json& d) {
    d["wan_links"][0]["latency_us"] = 20000;
    d["wan_links"][0].erase("latency_ms");
  });
  CHECK(unit.message == unit.path +
                            ": /wan_links/0/latency_us: got unknown key \"latency_us\"; expected a "
                            "known key; did you mean \"latency_ms\"?");
}

TEST_CASE("duplicate site names and duplicate node group names") {
  const Outcome site = load_edited("dup-site.json", [](json& d) { d["sites"][1]["name"] = "dc-a"; });
  CHECK(site.message == site.path +
                            ": /sites/1/name: got \"dc-a\"; expected a site name not used before "
                            "(site 0 is already \"dc-a\")");
  const Outcome group = load_edited("dup-group.json", [](json& d) {
    d["sites"][0]["node_groups"].push_back(d["sites"][0]["node_groups"][0]);
  });
  CHECK(group.message == group.path +
                             ": /sites/0/node_groups/1/name: got \"dgx\"; expected a node group "
                             "name not used before in this site (node group 0 is already \"dgx\")");
}

TEST_CASE("a WAN link naming an unknown site, or one site twice") {
  const Outcome o = load_edited("wan-site.json", [](json& d) { d["wan_links"][0]["sites"][1] = "dc-bb"; });
  CHECK(o.message == o.path +
                         ": /wan_links/0/sites/1: got \"dc-bb\"; expected the name of a site in "
                         "/sites (dc-a, dc-b); did you mean \"dc-b\"?");
  const Outcome same = load_edited("wan-same.json", [](json& d) { d["wan_links"][0]["sites"][1] = "dc-a"; });
  CHECK(same.message == same.path +
                            ": /wan_links/0/sites: got [\"dc-a\",\"dc-a\"]; expected two different "
                            "site names");
}

TEST_CASE("a site that no chain of WAN links reaches") {
  const Outcome none = load_edited("no-wan.json", [](json& d) { d.erase("wan_links"); });
  CHECK(none.message == none.path +
                            ": /sites/1/name: got site \"dc-b\" with no chain of wan_links to site "
                            "\"dc-a\"; expected every site joined to the others by wan_links "
                            "(routes must exist between every pair of GPUs)");
  const Outcome third = load_edited("third-site.json", [](json& d) {
    json site = d["sites"][1];
    site["name"] = "dc-c";
    d["sites"].push_back(site);
  });
  CHECK(third.message == third.path +
                             ": /sites/2/name: got site \"dc-c\" with no chain of wan_links to site "
                             "\"dc-a\"; expected every site joined to the others by wan_links "
                             "(routes must exist between every pair of GPUs)");
}

TEST_CASE("empty sites, empty node groups, empty names") {
  const Outcome sites = load_edited("empty-sites.json", [](json& d) {
    d["sites"] = json::array();
    d.erase("wan_links");
  });
  CHECK(sites.message == sites.path + ": /sites: got []; expected a non-empty array of sites");
  const Outcome groups = load_edited("empty-groups.json", [](json& d) { d["sites"][1]["node_groups"] = json::array(); });
  CHECK(groups.message ==
        groups.path + ": /sites/1/node_groups: got []; expected a non-empty array of node groups");
  const Outcome name = load_edited("empty-name.json", [](json& d) { d["sites"][0]["name"] = ""; });
  CHECK(name.message == name.path + ": /sites/0/name: got \"\"; expected a non-empty string");
  const Outcome zero = load_edited("zero-count.json", [](json& d) { d["sites"][0]["node_groups"][0]["count"] = 0; });
  CHECK(zero.message == zero.path + ": /sites/0/node_groups/0/count: got 0; expected an integer > 0");
}

TEST_CASE("a cluster larger than ids can hold") {
  const Outcome o = load_edited("huge.json", [](json& d) { d["sites"][1]["node_groups"][0]["count"] = 200000; });
  CHECK(o.message == o.path +
                         ": /sites/1/node_groups/0/count: got 200000; expected a cluster of at "
                         "most 1048576 GPUs in all");
}

// A fuzzing finding (tests/fuzz, fuzz_cluster): notes of any JSON type were accepted unread.
TEST_CASE("a source or description that is not a string") {
  const Outcome site = load_edited("note-site.json", [](json& d) { d["sites"][0]["description"] = 5; });
  CHECK(site.message == site.path + ": /sites/0/description: got 5; expected a string");
  const Outcome nic = load_edited("note-nic.json", [](json& d) {
    d["sites"][1]["node_groups"][0]["nic"]["source"] = json::array({1, 2});
  });
  CHECK(nic.message == nic.path + ": /sites/1/node_groups/0/nic/source: got [1,2]; expected a string");
  const Outcome wan = load_edited("note-wan.json", [](json& d) { d["wan_links"][0]["source"] = nullptr; });
  CHECK(wan.message == wan.path + ": /wan_links/0/source: got null; expected a string");
}

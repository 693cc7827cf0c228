// Pair links (top-level `pair_links`, topologies/README.md "Pair links"): measured bandwidth and
// latency matrices between machines. The shipped three-machine file, the links and routes they
// give, and every class of bad input, messages pinned.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/cluster_loader.hpp"

using hetsim::Cluster;
using hetsim::test::load_error;
using hetsim::test::write_scratch_file;
using nlohmann::json;

namespace {

// Three one-GPU machines of one site; asymmetric on purpose (a measured upload and download
// differ): 0 -> 1 at 2 Gbit/s, 1 -> 0 at 1 Gbit/s.
const char* kPairs = R"({
  "name": "pairs",
  "sites": [ { "name": "net", "fabric": { "latency_us": 0 },
    "node_groups": [ { "name": "m", "count": 3, "gpu": "h100-sxm", "gpus_per_node": 1,
      "intra_node": { "bandwidth_GBps": 450, "latency_us": 8 },
      "nic": { "bandwidth_Gbps": 400, "latency_us": 24 } } ] } ],
  "pair_links": { "machines": ["net/m0", "net/m1", "net/m2"],
    "bandwidth_Gbps": [[0, 2, 3], [1, 0, 4], [5, 6, 0]],
    "latency_ms": [[0, 10, 20], [11, 0, 30], [21, 31, 0]], "source": "test" } })";

std::string edited(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(kPairs);
  edit(doc);
  return write_scratch_file(name, doc.dump(2));
}

}  // namespace

TEST_CASE("each ordered pair of machines is one link, the whole route between them") {
  const Cluster c =
      hetsim::load_cluster(edited("pairs.json", [](json&) {}), hetsim::test::kGpuTypes);
  REQUIRE(c.route(0, 1).size() == 1);
  const hetsim::Link& forward = c.links()[c.route(0, 1).front()];
  CHECK(forward.name == "pair/net/m0->net/m1");
  CHECK(forward.link_class == hetsim::LinkClass::kWan);
  CHECK(forward.bandwidth_bytes_per_s == 2e9 / 8);
  CHECK(forward.latency_s == doctest::Approx(10e-3).epsilon(1e-15));
  // The matrix is read as given: i -> j is row i, column j.
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(1, 0) == 1e9 / 8);
  CHECK(c.route_latency_s(1, 0) == doctest::Approx(11e-3).epsilon(1e-15));
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(2, 1) == 6e9 / 8);
  CHECK(c.route_latency_s(2, 1) == doctest::Approx(31e-3).epsilon(1e-15));
  CHECK(c.links().size() == 3 * 2 + 6);  // two NIC links per GPU, six pair links
}

TEST_CASE("machines left out of the matrix keep the fabric route") {
  const Cluster c = hetsim::load_cluster(edited("pairs-two.json",
                                                [](json& d) {
                                                  auto& p = d["pair_links"];
                                                  p["machines"] = {"net/m0", "net/m2"};
                                                  p["bandwidth_Gbps"] = {{0, 3}, {5, 0}};
                                                  p["latency_ms"] = {{0, 20}, {21, 0}};
                                                }),
                                         hetsim::test::kGpuTypes);
  CHECK(c.route(0, 2).size() == 1);
  CHECK(c.route(0, 1).size() == 2);  // NIC up, NIC down
  CHECK(c.route_latency_s(0, 1) == doctest::Approx(24e-6).epsilon(1e-12));
}

TEST_CASE("the shipped three-machine matrix: Yuan et al. 2022's measured AWS figures") {
  const Cluster c = hetsim::load_cluster(hetsim::test::shipped_cluster("pair-matrix-3machine.json"),
                                         {"v100-16gb"});
  CHECK(c.gpu_count() == 24);
  // Virginia (GPUs 0-7) -> Oregon (16-23): 0.79 Gbit/s, 67 ms; Ohio -> Oregon: 1.10 Gbit/s, 49 ms.
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(3, 20) ==
        doctest::Approx(0.79e9 / 8).epsilon(1e-15));
  CHECK(c.route_latency_s(3, 20) == doctest::Approx(67e-3).epsilon(1e-15));
  CHECK(c.route_bottleneck_bandwidth_bytes_per_s(9, 17) ==
        doctest::Approx(1.10e9 / 8).epsilon(1e-15));
  CHECK(c.route_latency_s(17, 9) == doctest::Approx(49e-3).epsilon(1e-15));
  CHECK(c.route(0, 7).size() == 2);  // inside a machine: NVLink
}

TEST_CASE(
    "bad pair links: one line naming the file, the JSON path, the value and what was expected") {
  const std::string non_square = edited("pairs-row.json", [](json& d) {
    d["pair_links"]["bandwidth_Gbps"][1] = {1, 0};
  });
  CHECK(load_error(non_square) ==
        non_square +
            ": /pair_links/bandwidth_Gbps/1: got [1,0]; expected a row of 3 "
            "numbers, one per machine (got 2)");
  const std::string rows =
      edited("pairs-rows.json", [](json& d) { d["pair_links"]["latency_ms"].erase(2); });
  CHECK(load_error(rows) ==
        rows +
            ": /pair_links/latency_ms: got [[0,10,20],[11,0,30]]; expected an array of "
            "3 rows, one per machine (got 2)");
  const std::string negative =
      edited("pairs-negative.json", [](json& d) { d["pair_links"]["latency_ms"][2][0] = -1; });
  CHECK(load_error(negative) ==
        negative + ": /pair_links/latency_ms/2/0: got -1; expected a number between 0 and 10000");
  const std::string zero =
      edited("pairs-zero.json", [](json& d) { d["pair_links"]["bandwidth_Gbps"][0][2] = 0; });
  CHECK(load_error(zero) ==
        zero + ": /pair_links/bandwidth_Gbps/0/2: got 0; expected a number between 1e-06 and 1e+07");
  // A denormal bandwidth is > 0, yet every route over it would cost infinity.
  const std::string tiny =
      edited("pairs-denormal.json", [](json& d) { d["pair_links"]["bandwidth_Gbps"][1][0] = 1e-320; });
  CHECK(load_error(tiny) ==
        tiny + ": /pair_links/bandwidth_Gbps/1/0: got 1e-320; expected a number between 1e-06 and 1e+07");
  // JSON has no NaN; a string or null where a number belongs is refused the same way.
  const std::string nan =
      edited("pairs-nan.json", [](json& d) { d["pair_links"]["bandwidth_Gbps"][2][1] = "NaN"; });
  CHECK(load_error(nan) ==
        nan + ": /pair_links/bandwidth_Gbps/2/1: got \"NaN\"; expected a number between 1e-06 and 1e+07");
  const std::string null =
      edited("pairs-null.json", [](json& d) { d["pair_links"]["latency_ms"][0][1] = nullptr; });
  CHECK(load_error(null) ==
        null + ": /pair_links/latency_ms/0/1: got null; expected a number between 0 and 10000");
  const std::string diagonal =
      edited("pairs-diagonal.json", [](json& d) { d["pair_links"]["bandwidth_Gbps"][1][1] = 9; });
  CHECK(load_error(diagonal) ==
        diagonal +
            ": /pair_links/bandwidth_Gbps/1/1: got 9; expected 0 on the diagonal (a "
            "machine has no pair link to itself)");
  const std::string unknown =
      edited("pairs-unknown.json", [](json& d) { d["pair_links"]["machines"][1] = "net/m7"; });
  CHECK(load_error(unknown) ==
        unknown +
            ": /pair_links/machines/1: got \"net/m7\"; expected the name of a node of "
            "/sites, \"site/group<k>\" with k from 0; did you mean \"net/m0\"?");
  const std::string twice =
      edited("pairs-twice.json", [](json& d) { d["pair_links"]["machines"][2] = "net/m0"; });
  CHECK(load_error(twice) == twice +
                                 ": /pair_links/machines/2: got \"net/m0\"; expected a node not "
                                 "listed before in machines");
  const std::string one =
      edited("pairs-one.json", [](json& d) { d["pair_links"]["machines"] = {"net/m0"}; });
  CHECK(load_error(one) ==
        one +
            ": /pair_links/machines: got [\"net/m0\"]; expected an array of at least two "
            "node names (\"site/group<k>\")");
  const std::string missing =
      edited("pairs-missing.json", [](json& d) { d["pair_links"].erase("latency_ms"); });
  CHECK(load_error(missing) ==
        missing +
            ": /pair_links/latency_ms: got nothing (missing); expected a value for "
            "required member \"latency_ms\"");
  const std::string typo = edited("pairs-typo.json", [](json& d) {
    d["pair_links"]["bandwidth_gbps"] = d["pair_links"]["bandwidth_Gbps"];
    d["pair_links"].erase("bandwidth_Gbps");
  });
  CHECK(load_error(typo).find("did you mean \"bandwidth_Gbps\"?") != std::string::npos);
}

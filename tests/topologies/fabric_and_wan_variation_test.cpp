// Oversubscribed site fabrics (a node uplink of gpus_per_node * nic / ratio on inter-node
// routes) and time-varying WAN bandwidth (a trace file or a seeded random walk), with the error
// message of each new class of mistake pinned.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "tests/topologies/cluster_test_support.hpp"
#include "topologies/bandwidth_variation.hpp"
#include "topologies/cluster_loader.hpp"

using hetsim::test::kGpuTypes;
using hetsim::test::write_scratch_file;
using nlohmann::json;

namespace {

bool spans_equal(std::span<const hetsim::BandwidthPoint> a, std::span<const hetsim::BandwidthPoint> b) {
  return std::ranges::equal(a, b, [](const hetsim::BandwidthPoint& x, const hetsim::BandwidthPoint& y) {
    return x.time_s == y.time_s && x.bytes_per_s == y.bytes_per_s;
  });
}

const char* kTwoSites = R"({
  "name": "two", "sites": [
    { "name": "dc-a", "fabric": { "latency_us": 0.0, "oversubscription": 4 },
      "node_groups": [ { "name": "dgx", "count": 2, "gpu": "h100-sxm", "gpus_per_node": 8,
        "intra_node": { "bandwidth_GBps": 450, "latency_us": 8.0 },
        "nic": { "bandwidth_Gbps": 400, "latency_us": 24.0 } } ] },
    { "name": "dc-b", "fabric": { "latency_us": 0.0 },
      "node_groups": [ { "name": "dgx", "count": 1, "gpu": "a100-80gb", "gpus_per_node": 8,
        "intra_node": { "bandwidth_GBps": 300, "latency_us": 8.0 },
        "nic": { "bandwidth_Gbps": 200, "latency_us": 24.0 } } ] } ],
  "wan_links": [ { "sites": ["dc-a", "dc-b"], "bandwidth_Gbps": 100, "latency_ms": 20,
                   "egress_usd_per_GB": 0.02 } ] })";

std::string load_message(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(kTwoSites);
  edit(doc);
  const std::string path = write_scratch_file(name, doc.dump(2));
  try {
    (void)hetsim::load_cluster(path, kGpuTypes);
  } catch (const hetsim::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

hetsim::Cluster load(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(kTwoSites);
  edit(doc);
  return hetsim::load_cluster(write_scratch_file(name, doc.dump(2)), kGpuTypes);
}

}  // namespace

TEST_CASE("an oversubscribed fabric puts the node uplink on inter-node routes") {
  const hetsim::Cluster cluster = load("oversub.json", [](json&) {});
  // Same site, other node: NIC up, node 0 uplink, node 1 downlink, NIC down.
  const auto& route = cluster.route(0, 8);
  REQUIRE(route.size() == 4);
  const auto& up = cluster.links()[route[1]];
  CHECK(up.link_class == hetsim::LinkClass::kFabric);
  CHECK(up.name == "dc-a/dgx0/uplink");
  CHECK(cluster.links()[route[2]].name == "dc-a/dgx1/downlink");
  // 8 GPUs x 400 Gbit/s / 4 = 800 Gbit/s = 100 GB/s; the route's bottleneck stays the NIC.
  std::printf("  uplink bandwidth: expected 1e11 B/s, actual %.12g B/s\n", up.bandwidth_bytes_per_s);
  CHECK(std::abs(up.bandwidth_bytes_per_s - 1e11) / 1e11 < 1e-12);
  CHECK(up.latency_s == 0);
  // Latency unchanged by the uplinks (they add bandwidth limits, not hops of delay).
  CHECK(cluster.route_latency_s(0, 8) == doctest::Approx(24e-6).epsilon(1e-12));
  // Same node: no uplink. Other site: uplink of the oversubscribed side only.
  CHECK(cluster.route(0, 1).size() == 2);
  const auto& wan_route = cluster.route(0, 16);
  REQUIRE(wan_route.size() == 4);
  CHECK(cluster.links()[wan_route[1]].name == "dc-a/dgx0/uplink");
  CHECK(cluster.links()[wan_route[2]].link_class == hetsim::LinkClass::kWan);
  CHECK(std::string(hetsim::to_string(hetsim::LinkClass::kFabric)) == "fabric");
}

TEST_CASE("a non-blocking fabric (ratio 1 or none) adds no uplinks") {
  const hetsim::Cluster cluster = load("nonblocking.json", [](json& d) {
    d["sites"][0]["fabric"]["oversubscription"] = 1;
  });
  CHECK(cluster.route(0, 8).size() == 2);
}

TEST_CASE("a WAN bandwidth trace file is read, relative to the cluster file") {
  write_scratch_file("wan-trace.csv", "time_s,bandwidth_Gbps\n0,100\n60,40\n120,80\n");
  const hetsim::Cluster cluster = load("traced.json", [](json& d) {
    d["wan_links"][0]["bandwidth_trace_file"] = "wan-trace.csv";
  });
  const auto trace = cluster.bandwidth_trace(cluster.route(0, 16)[2]);
  REQUIRE(trace.size() == 3);
  CHECK(trace[1].time_s == 60);
  CHECK(trace[1].bytes_per_s == 40e9 / 8);
  // Both directions follow it; the NIC links beside it stay constant.
  const auto back = cluster.route(16, 0);  // dc-b's NIC, the WAN, dc-a's node downlink and NIC
  REQUIRE(cluster.links()[back[1]].link_class == hetsim::LinkClass::kWan);
  CHECK(spans_equal(cluster.bandwidth_trace(back[1]), trace));
  CHECK(cluster.bandwidth_trace(cluster.route(0, 16)[0]).empty());
}

TEST_CASE("a WAN random walk is the same for a seed and stays within its bounds") {
  const auto walk = [](int seed) {
    const hetsim::Cluster c = load("walk.json", [seed](json& d) {
      d["wan_links"][0]["bandwidth_random_walk"] = {{"seed", seed},   {"step_s", 10},
                                                    {"sigma", 0.2},   {"min_Gbps", 10},
                                                    {"max_Gbps", 100}, {"duration_s", 3600}};
    });
    // A copy: the cluster, and the trace it holds, end with this call.
    const auto trace = c.bandwidth_trace(c.route(0, 16)[2]);
    return std::vector<hetsim::BandwidthPoint>(trace.begin(), trace.end());
  };
  const auto a = walk(7);
  const auto b = walk(7);
  const auto c = walk(8);
  REQUIRE(a.size() == 361);
  bool same = true;
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].bytes_per_s == b[i].bytes_per_s && a[i].time_s == b[i].time_s;
    differs = differs || a[i].bytes_per_s != c[i].bytes_per_s;
    CHECK(a[i].bytes_per_s >= 10e9 / 8);
    CHECK(a[i].bytes_per_s <= 100e9 / 8);
  }
  CHECK(same);
  CHECK(differs);
  CHECK(a[0].bytes_per_s == 100e9 / 8);  // starts at the configured bandwidth
}

TEST_CASE("the Box-Muller draws have the moments of a standard normal") {
  hetsim::NormalDraws normal(1);
  double sum = 0, squares = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double z = normal.next();
    sum += z;
    squares += z * z;
  }
  // Standard errors: mean 1/sqrt(n) = 0.0022, variance sqrt(2/n) = 0.0032; 5 of each.
  CHECK(std::abs(sum / n) < 0.011);
  CHECK(std::abs(squares / n - 1) < 0.016);
}

TEST_CASE("bad fabric and WAN variation input: pinned messages") {
  const std::string dir = std::filesystem::path(write_scratch_file("x", "")).parent_path().string();
  CHECK(load_message("bad-oversub.json", [](json& d) { d["sites"][0]["fabric"]["oversubscription"] = 0.5; }) ==
        dir + "/bad-oversub.json: /sites/0/fabric/oversubscription: got 0.5; expected a ratio in [1, 1e+06] "
              "(1 = non-blocking; 4 = nodes get a quarter of their NIC bandwidth into the fabric)");
  // 1e308 used to pass and end in a report that was not finite, naming no input.
  CHECK(load_message("huge-oversub.json", [](json& d) { d["sites"][0]["fabric"]["oversubscription"] = 1e308; }) ==
        dir + "/huge-oversub.json: /sites/0/fabric/oversubscription: got 1e+308; expected a ratio in [1, 1e+06] "
              "(1 = non-blocking; 4 = nodes get a quarter of their NIC bandwidth into the fabric)");
  CHECK(load_message("huge-egress.json", [](json& d) { d["wan_links"][0]["egress_usd_per_GB"] = 1e308; }) ==
        dir + "/huge-egress.json: /wan_links/0/egress_usd_per_GB: got 1e+308; expected a number between 0 and 1000");
  CHECK(load_message("both.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "t.csv";
          d["wan_links"][0]["bandwidth_random_walk"] = json::object();
        }) == dir + "/both.json: /wan_links/0/bandwidth_random_walk: got {}; expected either "
                    "bandwidth_trace_file or bandwidth_random_walk, not both");
  CHECK(load_message("walk-max.json", [](json& d) {
          d["wan_links"][0]["bandwidth_random_walk"] = {{"seed", 1},      {"step_s", 10},
                                                        {"sigma", 0.2},   {"min_Gbps", 50},
                                                        {"max_Gbps", 20}, {"duration_s", 60}};
        }) == dir + "/walk-max.json: /wan_links/0/bandwidth_random_walk/max_Gbps: got 20; expected a "
                    "bandwidth >= min_Gbps (50)");
  write_scratch_file("bad-trace.csv", "time_s,bandwidth_Gbps\n0,100\n0,50\n");
  CHECK(load_message("bad-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "bad-trace.csv";
        }) == dir + "/bad-trace.csv: line 3: got time_s 0; expected a time after the previous row's 0");
  write_scratch_file("zero-trace.csv", "time_s,bandwidth_Gbps\n0,0\n");
  CHECK(load_message("zero-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "zero-trace.csv";
        }) == dir + "/zero-trace.csv: line 2: got bandwidth_Gbps 0; expected a bandwidth in [1e-06, 1e+07] Gbit/s");
  write_scratch_file("tiny-trace.csv", "time_s,bandwidth_Gbps\n0,1e-300\n");
  CHECK(load_message("tiny-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "tiny-trace.csv";
        }) == dir + "/tiny-trace.csv: line 2: got bandwidth_Gbps 1e-300; expected a bandwidth in [1e-06, 1e+07] Gbit/s");
  write_scratch_file("header-trace.csv", "t,bw\n0,1\n");
  CHECK(load_message("header-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "header-trace.csv";
        }) == dir + "/header-trace.csv: line 1: got \"t,bw\"; expected the header time_s,bandwidth_Gbps");
}

// Fuzzing findings (tests/fuzz, fuzz_csv and fuzz_cluster): a bandwidth cell was read up to its
// first non-digit, an empty trace file name opened the cluster's own directory, and a random walk
// could ask for ten million points (160 MB).
TEST_CASE("WAN variation input found by fuzzing: pinned messages") {
  const std::string dir = std::filesystem::path(write_scratch_file("x", "")).parent_path().string();
  write_scratch_file("xyz-trace.csv", "time_s,bandwidth_Gbps\n0,100xyz\n");
  CHECK(load_message("xyz-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "xyz-trace.csv";
        }) == dir + "/xyz-trace.csv: line 2: got bandwidth_Gbps \"100xyz\"; expected a finite number (Gbit/s)");
  write_scratch_file("inf-trace.csv", "time_s,bandwidth_Gbps\r\n0,100\r\n1e999,5\r\n");
  CHECK(load_message("inf-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "inf-trace.csv";
        }) == dir + "/inf-trace.csv: line 3: got time_s \"1e999\"; expected a finite number (seconds)");
  // Bytes that are not UTF-8 are quoted as they are (the message once went through a JSON
  // string, which threw on them).
  write_scratch_file("binary-trace.csv", "time_s,bandwidth_Gbps\n\xff,1\n");
  CHECK(load_message("binary-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "binary-trace.csv";
        }) == dir + "/binary-trace.csv: line 2: got time_s \"\xff\"; expected a finite number (seconds)");
  CHECK(load_message("empty-trace-name.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "";
        }) == dir + "/empty-trace-name.json: /wan_links/0/bandwidth_trace_file: got \"\"; expected a "
                    "non-empty string");
  CHECK(load_message("walk-steps.json", [](json& d) {
          d["wan_links"][0]["bandwidth_random_walk"] = {{"seed", 1},       {"step_s", 1},
                                                        {"sigma", 0.2},    {"min_Gbps", 10},
                                                        {"max_Gbps", 100}, {"duration_s", 2e6}};
        }) == dir + "/walk-steps.json: /wan_links/0/bandwidth_random_walk/step_s: got 1; expected at "
                    "most 1000000 steps in duration_s");
  // An endless trace (a device) stops at the input size limit instead of filling memory.
  CHECK(load_message("endless-trace.json", [](json& d) {
          d["wan_links"][0]["bandwidth_trace_file"] = "/dev/zero";
        }) == "/dev/zero: (document): got a file of more than 32 MiB; expected a CSV file of "
              "time_s,bandwidth_Gbps rows of at most that size");
  // Spaces around a cell and Windows line ends are still fine.
  write_scratch_file("spaced-trace.csv", "time_s,bandwidth_Gbps\r\n0, 100\r\n 60 ,40\r\n");
  const hetsim::Cluster spaced = load("spaced-trace.json", [](json& d) {
    d["wan_links"][0]["bandwidth_trace_file"] = "spaced-trace.csv";
  });
  const auto trace = spaced.bandwidth_trace(spaced.route(0, 16)[2]);
  REQUIRE(trace.size() == 2);
  CHECK(trace[1].time_s == 60);
  CHECK(trace[1].bytes_per_s == 40e9 / 8);
}

// The flow simulation of NCCL all-reduce and send/recv on the shipped DGX A100 clusters, held
// against measured timings (tests/data/vidur/network/a100_dgx/*.csv: microsoft/vidur profiling
// data, median ms by size and num_workers on a DGX A100; see tests/data/vidur/README*.md).
// The clusters carry NCCL's achievable NVLink bandwidth (230 GB/s per direction, the 8-GPU
// all-reduce busbw NVIDIA gives for A100; the datasheet says 300), the datasheet HDR NIC rate
// (200 Gbit/s) and the measured small-message latencies. The table printed here is the one in
// topologies/README.md ("Collectives against measurements"): the figures do not reach the 10%
// target; the test pins what holds: at 64 MiB (bandwidth-bound) every all-reduce prediction
// stays below the measurement, as these rates are what NCCL reaches at best; the in-node
// send/recv of 64 MiB, bound by the NVLink figure alone, comes within 3% of the measured one; and
// the send/recv latency floor matches (by construction: the clusters' latencies were taken from
// that file). Beside each row it
// prints how close any time affine in the message size (alpha + S / beta with alpha, beta >= 0, the
// form of every ring, tree and alpha-beta model, NCCL's own tuning model per protocol included)
// can come to the measured sizes >= 1 MiB: fitted to the series itself, not to a datasheet.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "sim/collectives/collective_plan.hpp"
#include "sim/collectives/flow_collective.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {

struct Key {
  int workers;
  int per_node;
  bool operator<(const Key& o) const { return std::tie(workers, per_node) < std::tie(o.workers, o.per_node); }
};

// Median time (ms) by configuration and size; sizes measured twice are averaged.
std::map<Key, std::map<double, double>> read_medians(const std::string& file, const std::string& op) {
  std::ifstream in(std::string(HETSIM_SOURCE_DIR) + "/tests/data/vidur/network/a100_dgx/" + file);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::map<Key, std::map<double, std::pair<double, int>>> sums;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    // columns: index, min, max, mean, median, std, rank, num_workers, size, collective, dpn, max dpn
    REQUIRE(cells.size() == 12);
    REQUIRE(cells[9] == op);
    auto& [sum, count] = sums[{std::stoi(cells[7]), std::stoi(cells[10])}][std::stod(cells[8])];
    sum += std::stod(cells[4]);
    ++count;
  }
  std::map<Key, std::map<double, double>> medians;
  for (const auto& [key, sizes] : sums)
    for (const auto& [size, sc] : sizes) medians[key][size] = sc.first / sc.second;
  return medians;
}

const Cluster& a100_cluster(int nodes) {
  static const Cluster one = load_cluster(
      std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/dgx-a100-1node.json", {"a100-80gb"});
  static const Cluster two = load_cluster(
      std::string(HETSIM_SOURCE_DIR) + "/topologies/clusters/dgx-a100-2node.json", {"a100-80gb"});
  return nodes == 1 ? one : two;
}

// `per_node` GPUs on each of workers/per_node nodes, node by node (ring order).
std::vector<GpuId> group(int workers, int per_node) {
  std::vector<GpuId> gpus;
  for (int node = 0; node < workers / per_node; ++node)
    for (int g = 0; g < per_node; ++g) gpus.push_back(node * 8 + g);
  return gpus;
}

// Whether some a >= 0, c >= 0 put a + S c within a relative `band` of every (S, t): for each c
// the feasible a form an interval, so the pairs of points bound c from both sides.
bool affine_within(const std::vector<std::pair<double, double>>& points, double band) {
  double low = 0, high = INFINITY;
  for (const auto& [s, t] : points) high = std::min(high, (1 + band) * t / s);
  for (const auto& [si, ti] : points)
    for (const auto& [sj, tj] : points) {
      // (1 - band) ti - si c <= a <= (1 + band) tj - sj c
      const double gap = (1 + band) * tj - (1 - band) * ti;
      if (sj > si) high = std::min(high, gap / (sj - si));
      if (sj < si) low = std::max(low, -gap / (si - sj));
      if (sj == si && gap < 0) return false;
    }
  return low <= high;
}

// The smallest worst-case relative error any affine time reaches on `points` (bisection).
double best_affine_worst_error(const std::vector<std::pair<double, double>>& points) {
  double low = 0, high = 1;
  while (!affine_within(points, high)) high *= 2;
  for (int i = 0; i < 50; ++i) {
    const double mid = (low + high) / 2;
    (affine_within(points, mid) ? high : low) = mid;
  }
  return high;
}

bool power_of_two(double size) {
  const double l = std::log2(size);
  return l == std::floor(l);
}

struct Summary {
  double worst_large = 0;    // largest |error| for sizes >= 1 MiB
  double mean_large = 0;
  double floor_error = 0;    // at the smallest size
  bool below_at_64mib = true;  // prediction < measurement at 64 MiB in every configuration
  double in_node_error_64mib = 0;  // largest |error| at 64 MiB of the one-node configurations
  int configurations = 0;
  int beyond_any_affine = 0;   // configurations no affine time fits within 10% at >= 1 MiB
};

Summary compare(const char* file, const char* op_name, CollectiveOp op) {
  Summary all;
  std::printf("  | %s | workers | GPUs/node | 2 KiB measured / predicted (us) | error | >= 1 MiB: mean error | worst | best affine fit: worst | 64 MiB measured / predicted (ms) |\n", op_name);
  for (const auto& [key, sizes] : read_medians(file, op_name)) {
    const int nodes = key.workers / key.per_node;
    const Cluster& cluster = a100_cluster(nodes);
    const auto gpus = group(key.workers, key.per_node);
    double sum = 0, worst = 0, count = 0, floor_error = 0, floor_m = 0, floor_p = 0, big_m = 0, big_p = 0;
    bool first = true;
    std::vector<std::pair<double, double>> large;
    for (const auto& [size, measured_ms] : sizes) {
      if (!power_of_two(size)) continue;
      const double predicted_ms =
          1e3 * simulate_collective_flows(cluster, plan_collective(cluster, op, CollectiveAlgo::kRing, gpus, size)).time_s;
      const double error = predicted_ms / measured_ms - 1;
      if (first) {
        floor_error = error;
        floor_m = measured_ms;
        floor_p = predicted_ms;
        first = false;
      }
      if (size >= 1024.0 * 1024) {
        large.emplace_back(size, measured_ms);
        sum += std::abs(error);
        worst = std::max(worst, std::abs(error));
        ++count;
      }
      if (size == 64.0 * 1024 * 1024) {
        big_m = measured_ms;
        big_p = predicted_ms;
        all.below_at_64mib = all.below_at_64mib && predicted_ms < measured_ms;
        if (nodes == 1) all.in_node_error_64mib = std::max(all.in_node_error_64mib, std::abs(error));
      }
    }
    const double affine = best_affine_worst_error(large);
    std::printf("  | | %d | %d | %.0f / %.0f | %+.0f%% | %.0f%% | %.0f%% | %.1f%% | %.3f / %.3f |\n", key.workers,
                key.per_node, floor_m * 1e3, floor_p * 1e3, 100 * floor_error, 100 * sum / count,
                100 * worst, 100 * affine, big_m, big_p);
    if (affine > 0.10) ++all.beyond_any_affine;
    ++all.configurations;
    all.worst_large = std::max(all.worst_large, worst);
    all.mean_large = std::max(all.mean_large, sum / count);
    all.floor_error = std::max(all.floor_error, std::abs(floor_error));
  }
  return all;
}

}  // namespace

TEST_CASE("the best affine fit's worst error: exact on affine data, 1/3 on a falling pair") {
  CHECK(best_affine_worst_error({{1, 3}, {2, 5}, {4, 9}}) == doctest::Approx(0).epsilon(1e-9));
  // t falls from 2 to 1: c = 0 and a = 4/3 balance (2 - a)/2 = (a - 1)/1 = 1/3.
  CHECK(best_affine_worst_error({{1, 2}, {2, 1}}) == doctest::Approx(1.0 / 3).epsilon(1e-9));
}

TEST_CASE("DGX A100 all-reduce and send/recv against measurements (achievable NVLink bandwidth)") {
  const Summary all_reduce = compare("all_reduce.csv", "all_reduce", CollectiveOp::kAllReduce);
  const Summary send_recv = compare("send_recv.csv", "send_recv", CollectiveOp::kSend);
  std::printf("  all_reduce: worst |error| >= 1 MiB %.0f%%, small-message floor worst %.0f%%\n",
              100 * all_reduce.worst_large, 100 * all_reduce.floor_error);
  std::printf("  send_recv:  worst |error| >= 1 MiB %.0f%%, small-message floor worst %.0f%%\n",
              100 * send_recv.worst_large, 100 * send_recv.floor_error);
  CHECK(all_reduce.configurations == 7);
  CHECK(send_recv.configurations == 2);
  // NCCL's best all-reduce rates bound the measured ones in the bandwidth-bound regime.
  CHECK(all_reduce.below_at_64mib);
  // 64 MiB between two GPUs of a node: 0.300 ms predicted at 230 GB/s against 0.294 ms measured.
  std::printf("  send_recv in one node at 64 MiB: |error| %.1f%%\n", 100 * send_recv.in_node_error_64mib);
  CHECK(send_recv.in_node_error_64mib < 0.03);
  CHECK(send_recv.floor_error < 0.25);
  // The measured times themselves keep any affine model from 10% at every size >= 1 MiB in
  // five of the nine configurations (e.g. 4 workers on 2 nodes: 8.571 ms at 32 MiB, 8.490 ms at
  // 64 MiB).
  CHECK(all_reduce.beyond_any_affine + send_recv.beyond_any_affine == 5);
}

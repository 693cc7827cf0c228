// The heterogeneous layer partitioner: its dynamic programme against brute force over every
// contiguous partition of small random instances, a closed form, and its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "base/error.hpp"
#include "schedule_test_support.hpp"
#include "schedules/partitioner.hpp"

using hetsim::LayerPartition;
using hetsim::PartitionStage;
using hetsim::PlanError;
using hetsim::testing::error_text;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Project-written draws (the standard distributions differ between library implementations).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
int uniform_int(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

struct Brute {
  double max_s = std::numeric_limits<double>::infinity();
  double total_s = std::numeric_limits<double>::infinity();
  std::vector<int> counts;  // lexicographically smallest (last stage first) among the best
};

// Every composition of `layers` into stages.size() parts >= 1, fitting memory: the smallest
// max stage time, then the smallest total (added from stage 0), then the fewest layers on the
// last stage, the one before, ...
Brute brute_force(int layers, const std::vector<PartitionStage>& stages) {
  Brute best;
  const int S = static_cast<int>(stages.size());
  std::vector<int> counts(static_cast<std::size_t>(S), 1);
  const auto visit = [&](const std::vector<int>& c) {
    double max_s = 0;
    double total = 0;
    for (int s = 0; s < S; ++s) {
      const PartitionStage& st = stages[s];
      if (st.fixed_bytes + c[s] * st.layer_bytes > st.capacity_bytes) return;
      const double t = st.fixed_s + c[s] * st.layer_s;
      max_s = std::max(max_s, t);
      total += t;
    }
    const auto reversed = [](std::vector<int> v) {
      std::reverse(v.begin(), v.end());
      return v;
    };
    const bool better =
        max_s < best.max_s ||
        (max_s == best.max_s &&
         (total < best.total_s || (total == best.total_s && reversed(c) < reversed(best.counts))));
    if (better) best = {max_s, total, c};
  };
  // Odometer over stages 0..S-2; the last stage takes the rest.
  while (true) {
    int used = 0;
    for (int s = 0; s + 1 < S; ++s) used += counts[s];
    if (layers - used >= 1) {
      counts[S - 1] = layers - used;
      visit(counts);
    }
    int s = S - 2;
    while (s >= 0 && ++counts[s] > layers) counts[s--] = 1;
    if (s < 0) break;
  }
  return best;
}

std::optional<LayerPartition> try_partition(int layers, const std::vector<PartitionStage>& stages) {
  try {
    return hetsim::partition_layers_balanced(layers, stages);
  } catch (const PlanError&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("two stages, one twice as fast: it takes two thirds of the layers") {
  // 12 layers, 2 s per layer on stage 0 and 1 s on stage 1: 4 and 8 layers give 8 s on both,
  // the only partition whose bottleneck is 12 * 2 * 1 / (2 + 1) = 8 s.
  const std::vector<PartitionStage> stages = {{"", 2.0, 0, 0, 0, 1}, {"", 1.0, 0, 0, 0, 1}};
  const LayerPartition p = hetsim::partition_layers_balanced(12, stages);
  std::printf("2 stages at 2 s and 1 s per layer, 12 layers: expected 4,8 (8 s); got %d,%d (%g s)\n",
              p.layers_per_stage[0], p.layers_per_stage[1], p.max_stage_s);
  CHECK(p.layers_per_stage == std::vector<int>{4, 8});
  CHECK(p.max_stage_s == 8.0);
  CHECK(p.total_stage_s == 16.0);
  CHECK(p.stage_s == std::vector<double>{8.0, 8.0});
}

TEST_CASE("the embedding and LM head costs move layers off the first and last stages") {
  // Four equal stages, 16 layers at 1 s; embedding 1 s on stage 0, LM head 3 s on stage 3.
  // The bottleneck cannot go below (16 + 1 + 3) / 4 = 5 s; reaching it needs n0 <= 4, n1 <= 5,
  // n2 <= 5, n3 <= 2, whose bounds add up to exactly 16: 4,5,5,2 is the only such split.
  std::vector<PartitionStage> stages(4, PartitionStage{"", 1.0, 0, 0, 0, 1});
  stages.front().fixed_s = 1.0;
  stages.back().fixed_s = 3.0;
  const LayerPartition p = hetsim::partition_layers_balanced(16, stages);
  CHECK(p.max_stage_s == 5.0);
  CHECK(p.total_stage_s == 20.0);
  CHECK(p.layers_per_stage == std::vector<int>{4, 5, 5, 2});
}

TEST_CASE("the dynamic programme matches brute force on random heterogeneous instances") {
  // 3,000 instances, 1-5 stages, up to 11 layers; stage speeds vary 8x, capacities so that
  // some instances cannot fit. Compared exactly: the bottleneck and the total (the same sums in
  // the same order), feasibility, and that the returned partition achieves both and fits.
  std::mt19937_64 rng(20240611);
  int feasible = 0;
  int infeasible = 0;
  for (int instance = 0; instance < 3000; ++instance) {
    const int S = uniform_int(rng, 1, 5);
    const int L = uniform_int(rng, S, 11);
    std::vector<PartitionStage> stages(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      PartitionStage& st = stages[s];
      st.layer_s = 0.25 + 1.75 * uniform01(rng);
      st.layer_bytes = (1 + uniform01(rng)) * kGiB;
      st.fixed_bytes = uniform01(rng) * kGiB;
      st.capacity_bytes = (1.5 + 6 * uniform01(rng)) * kGiB;
    }
    stages.front().fixed_s = 0.5 * uniform01(rng);
    stages.back().fixed_s += 1.5 * uniform01(rng);
    CAPTURE(instance);
    CAPTURE(S);
    CAPTURE(L);
    const Brute expected = brute_force(L, stages);
    const auto got = try_partition(L, stages);
    REQUIRE(got.has_value() == !expected.counts.empty());
    if (!got) {
      ++infeasible;
      continue;
    }
    ++feasible;
    CHECK(got->max_stage_s == expected.max_s);
    CHECK(got->total_stage_s == expected.total_s);
    int sum = 0;
    for (int s = 0; s < S; ++s) {
      CHECK(got->layers_per_stage[s] >= 1);
      CHECK(got->stage_bytes[s] <= stages[s].capacity_bytes);
      sum += got->layers_per_stage[s];
    }
    CHECK(sum == L);
  }
  std::printf("random instances: %d feasible, %d infeasible, all matching brute force\n", feasible,
              infeasible);
  CHECK(feasible > 1000);
  CHECK(infeasible > 100);
}

TEST_CASE("with integer costs (many ties) the partition itself matches brute force's tie-break") {
  // Integer seconds make every sum exact, so ties are real and the rule (smallest max, then
  // smallest total, then fewest layers on the last stage, the one before, ...) decides.
  std::mt19937_64 rng(7);
  for (int instance = 0; instance < 2000; ++instance) {
    const int S = uniform_int(rng, 1, 5);
    const int L = uniform_int(rng, S, 10);
    std::vector<PartitionStage> stages(static_cast<std::size_t>(S));
    for (int s = 0; s < S; ++s) {
      stages[s].layer_s = uniform_int(rng, 1, 3);
      stages[s].layer_bytes = uniform_int(rng, 1, 2);
      stages[s].capacity_bytes = uniform_int(rng, 3, 12);
    }
    stages.front().fixed_s = uniform_int(rng, 0, 2);
    stages.back().fixed_s += uniform_int(rng, 0, 3);
    CAPTURE(instance);
    const Brute expected = brute_force(L, stages);
    const auto got = try_partition(L, stages);
    REQUIRE(got.has_value() == !expected.counts.empty());
    if (got) CHECK(got->layers_per_stage == expected.counts);
  }
}

TEST_CASE("memory moves layers to the stage that has room, at the price of time") {
  // Stage 1 is 3x faster but holds only 3 layers (1 GiB each in 3.5 GiB): 10 layers split 7,3
  // (7 s) instead of the unconstrained 2,8 (max(2, 8/3) = 2.67 s).
  std::vector<PartitionStage> stages = {{"", 1.0, 0, kGiB, 0, 100 * kGiB},
                                        {"", 1.0 / 3, 0, kGiB, 0, 3.5 * kGiB}};
  CHECK(hetsim::partition_layers_balanced(10, stages).layers_per_stage == std::vector<int>{7, 3});
  stages[1].capacity_bytes = 100 * kGiB;
  CHECK(hetsim::partition_layers_balanced(10, stages).layers_per_stage == std::vector<int>{2, 8});
}

TEST_CASE("infeasible partitions are errors naming the stage, its need and its capacity") {
  std::vector<PartitionStage> stages = {{"stage 0 (h100-sxm)", 1, 0, 30 * kGiB, 10 * kGiB, 80 * kGiB},
                                        {"stage 1 (rtx-4090)", 1, 0, 20 * kGiB, 6 * kGiB, 24 * kGiB}};
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(4, stages); }) ==
        "stage 1 (rtx-4090) needs 26.00 GiB for one layer (6.00 GiB besides its layers + 20.00 GiB "
        "per layer) but its memory is 24.00 GiB");
  stages[1].layer_bytes = 10 * kGiB;
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(4, stages); }) ==
        "the stages' memory holds at most 3 of the 4 layers: stage 0 (h100-sxm) holds 2 (10.00 GiB "
        "+ 30.00 GiB per layer in 80.00 GiB); stage 1 (rtx-4090) holds 1 (6.00 GiB + 10.00 GiB per "
        "layer in 24.00 GiB)");
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(3, stages); }) == "(no error)");
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(1, stages); }) ==
        "1 layers cannot give each of 2 pipeline stages at least one layer");
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(4, {}); }) ==
        "the layer partitioner needs at least one stage");
  stages[0].layer_s = -1;
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(3, stages); }) ==
        "stage 0 (h100-sxm): layer_s is -1; expected a finite number >= 0");
  stages[0].layer_s = 1;
  stages[1].name.clear();
  stages[1].capacity_bytes = 0;
  CHECK(error_text<PlanError>([&] { hetsim::partition_layers_balanced(3, stages); }) ==
        "stage 1: capacity_bytes is 0; expected a number > 0");
  CHECK(error_text<PlanError>([&] { hetsim::evaluate_partition(stages, {1, 1, 1}); }) ==
        "3 layer counts for 2 stages; expected one count per stage");
}

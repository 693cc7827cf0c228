#include "schedules/partitioner.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "base/error.hpp"
#include "base/units.hpp"

namespace hetsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string stage_name(const std::vector<PartitionStage>& stages, std::size_t s) {
  return stages[s].name.empty() ? fmt::format("stage {}", s) : stages[s].name;
}

double gib(double bytes) { return bytes / units::kGiB; }

void check_stages(int layers, const std::vector<PartitionStage>& stages) {
  if (stages.empty()) throw PlanError("the layer partitioner needs at least one stage");
  if (layers < static_cast<int>(stages.size()))
    throw PlanError(fmt::format("{} layers cannot give each of {} pipeline stages at least one layer",
                                layers, stages.size()));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const PartitionStage& st = stages[s];
    const struct {
      const char* field;
      double value;
    } figures[] = {{"layer_s", st.layer_s},
                   {"fixed_s", st.fixed_s},
                   {"layer_bytes", st.layer_bytes},
                   {"fixed_bytes", st.fixed_bytes}};
    for (const auto& f : figures)
      if (!std::isfinite(f.value) || f.value < 0)
        throw PlanError(fmt::format("{}: {} is {}; expected a finite number >= 0",
                                    stage_name(stages, s), f.field, f.value));
    if (!(st.capacity_bytes > 0))
      throw PlanError(fmt::format("{}: capacity_bytes is {}; expected a number > 0",
                                  stage_name(stages, s), st.capacity_bytes));
  }
}

double stage_time(const PartitionStage& st, int n) { return st.fixed_s + n * st.layer_s; }
double stage_need(const PartitionStage& st, int n) { return st.fixed_bytes + n * st.layer_bytes; }
bool fits(const PartitionStage& st, int n) { return stage_need(st, n) <= st.capacity_bytes; }

// Names the memory shortfall when no partition fits: a stage that cannot hold one layer, or the
// most layers each stage can hold adding up to fewer than the model has.
[[noreturn]] void throw_memory_error(int layers, const std::vector<PartitionStage>& stages) {
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const PartitionStage& st = stages[s];
    if (!fits(st, 1))
      throw PlanError(fmt::format(
          "{} needs {:.2f} GiB for one layer ({:.2f} GiB besides its layers + {:.2f} GiB per layer) "
          "but its memory is {:.2f} GiB",
          stage_name(stages, s), gib(stage_need(st, 1)), gib(st.fixed_bytes), gib(st.layer_bytes),
          gib(st.capacity_bytes)));
  }
  std::string detail;
  int total = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    int most = 1;
    while (most < layers && fits(stages[s], most + 1)) ++most;
    total += most;
    detail += fmt::format("{}{} holds {} ({:.2f} GiB + {:.2f} GiB per layer in {:.2f} GiB)",
                          s == 0 ? "" : "; ", stage_name(stages, s), most, gib(stages[s].fixed_bytes),
                          gib(stages[s].layer_bytes), gib(stages[s].capacity_bytes));
  }
  throw PlanError(fmt::format("the stages' memory holds at most {} of the {} layers: {}", total,
                              layers, detail));
}

}  // namespace

LayerPartition evaluate_partition(const std::vector<PartitionStage>& stages,
                                  const std::vector<int>& layers_per_stage) {
  if (stages.size() != layers_per_stage.size())
    throw PlanError(fmt::format("{} layer counts for {} stages; expected one count per stage",
                                layers_per_stage.size(), stages.size()));
  LayerPartition p;
  p.layers_per_stage = layers_per_stage;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const double t = stage_time(stages[s], layers_per_stage[s]);
    p.stage_s.push_back(t);
    p.stage_bytes.push_back(stage_need(stages[s], layers_per_stage[s]));
    p.max_stage_s = std::max(p.max_stage_s, t);
    p.total_stage_s += t;
  }
  return p;
}

LayerPartition partition_layers_balanced(int layers, const std::vector<PartitionStage>& stages) {
  check_stages(layers, stages);
  const int S = static_cast<int>(stages.size());
  const int L = layers;
  const auto at = [L](int s, int l) { return static_cast<std::size_t>(s) * (L + 1) + l; };

  // Pass 1: bottleneck[s][l] = the smallest max stage time over partitions of the first l layers
  // onto stages 0..s, each stage within memory and holding >= 1 layer (infinite when none).
  std::vector<double> bottleneck(static_cast<std::size_t>(S) * (L + 1), kInf);
  for (int l = 1; l <= L; ++l)
    if (fits(stages[0], l)) bottleneck[at(0, l)] = stage_time(stages[0], l);
  for (int s = 1; s < S; ++s)
    for (int l = s + 1; l <= L; ++l)
      for (int k = s; k < l; ++k) {  // stages 0..s-1 hold k layers, stage s the other l - k
        if (bottleneck[at(s - 1, k)] == kInf || !fits(stages[s], l - k)) continue;
        const double t = std::max(bottleneck[at(s - 1, k)], stage_time(stages[s], l - k));
        if (t < bottleneck[at(s, l)]) bottleneck[at(s, l)] = t;
      }
  const double best_max = bottleneck[at(S - 1, L)];
  if (best_max == kInf) throw_memory_error(L, stages);

  // Pass 2: among partitions whose every stage takes <= best_max, the smallest total. Rounding
  // is monotone, so the smallest prefix total gives the smallest whole total. Ties keep the
  // largest k (fewest layers on the later stage), found by scanning k upward with <=.
  std::vector<double> total(static_cast<std::size_t>(S) * (L + 1), kInf);
  std::vector<int> choice(static_cast<std::size_t>(S) * (L + 1), -1);
  for (int l = 1; l <= L; ++l)
    if (fits(stages[0], l) && stage_time(stages[0], l) <= best_max)
      total[at(0, l)] = stage_time(stages[0], l);
  for (int s = 1; s < S; ++s)
    for (int l = s + 1; l <= L; ++l)
      for (int k = s; k < l; ++k) {
        const double t = stage_time(stages[s], l - k);
        if (total[at(s - 1, k)] == kInf || !fits(stages[s], l - k) || t > best_max) continue;
        const double sum = total[at(s - 1, k)] + t;
        if (sum <= total[at(s, l)]) {
          total[at(s, l)] = sum;
          choice[at(s, l)] = k;
        }
      }

  std::vector<int> counts(static_cast<std::size_t>(S), 0);
  int l = L;
  for (int s = S - 1; s > 0; --s) {
    const int k = choice[at(s, l)];
    counts[s] = l - k;
    l = k;
  }
  counts[0] = l;
  return evaluate_partition(stages, counts);
}

}  // namespace hetsim

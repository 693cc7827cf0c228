// The branch-and-bound search is exact: on a small space its top plans and every GPU subset's
// best equal brute force (every candidate that fits simulated), and its counts add up.
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "plan_test_support.hpp"
#include "tools/plan/plan_report.hpp"
#include "tools/plan/plan_search.hpp"

using namespace hetsim;
using namespace hetsim::plan;

namespace {

using test::catalog;
using test::kRoot;

// `cluster` relative to the source root.
PlanSearchOptions small_search(const std::string& cluster, int gbs, int seq) {
  PlanSearchOptions options;
  options.space = {kRoot + "/" + cluster, kRoot + "/models/configs/llama-3.2-1b.json", gbs, seq,
                   false};
  options.top = 5;
  options.jobs = 2;
  return options;
}

// Returns the pruned search's result.
PlanSearchResult check_search_equals_brute_force(PlanSearchOptions options) {
  const PlanSearchResult searched = search_plans(catalog(), options);
  options.prune = false;
  const PlanSearchResult brute = search_plans(catalog(), options);
  CHECK(brute.pruned_bound == 0);
  CHECK(searched.pruned_bound > 0);  // the bound does prune in this space
  CHECK(searched.simulated < brute.simulated);
  REQUIRE(searched.ranking.size() >= options.top);
  for (std::size_t k = 0; k < options.top; ++k) {
    CAPTURE(k);
    CHECK(searched.ranking[k] == brute.ranking[k]);
  }
  CHECK(searched.best_per_subset == brute.best_per_subset);
  for (const PlanSearchResult* r : {&searched, &brute}) {
    CHECK(r->pruned_memory + r->over_budget + r->refused + r->pruned_bound + r->simulated ==
          r->enumerated);
    CHECK(r->ranking.size() + r->simulation_refused + r->out_of_memory == r->simulated);
  }
  return searched;
}

}  // namespace

TEST_CASE("the search's best plans equal brute force's, by time") {
  check_search_equals_brute_force(small_search("topologies/clusters/dgx-a100-1node.json", 8, 256));
}

TEST_CASE("the search's best plans equal brute force's, by cost") {
  PlanSearchOptions options = small_search("topologies/clusters/dgx-a100-1node.json", 8, 256);
  options.objective = Objective::kCost;
  check_search_equals_brute_force(options);
}

TEST_CASE("on a mixed cluster the best plan of every GPU subset equals brute force's") {
  // 2 A100 + 2 H100: subsets all four, the H100s alone, the A100s alone.
  PlanSearchOptions options =
      small_search("tests/data/clusters/mixed-a100-h100-small.json", 8, 256);
  const PlanSearchResult result = check_search_equals_brute_force(options);
  REQUIRE(result.subsets.size() == 3);
  for (std::size_t s = 0; s < 3; ++s) CHECK(result.best_per_subset[s].has_value());
  // The report names the GPUs the best plan leaves out, or says it uses them all.
  const std::string text = plan_text(result, options);
  CHECK(text.find("GPU subsets (best plan on each):") != std::string::npos);
  const GpuSubset& chosen =
      result.subsets[result.outcomes[result.ranking.front()].candidate.subset];
  CHECK(text.find(chosen.left_out.empty()
                      ? "The best plan uses every GPU."
                      : "The best plan leaves out " + chosen.left_out_text) != std::string::npos);
  // Every ranked row on a subset names what it leaves out: before, plans of the same shape on
  // two subsets of the same size printed as identical rows ("(16 GPUs)").
  PlanSearchOptions every_row = options;
  every_row.top = result.ranking.size();
  const std::string all_rows = plan_text(result, every_row);
  int subset_rows = 0;
  for (std::size_t k = 0; k < result.ranking.size(); ++k) {
    const PlanOutcome& o = result.outcomes[result.ranking[k]];
    const GpuSubset& subset = result.subsets[o.candidate.subset];
    if (subset.left_out.empty()) continue;
    CAPTURE(subset.left_out_text);
    ++subset_rows;
    CHECK(all_rows.find(o.candidate.text() + " (" + std::to_string(subset.gpus) + " GPUs, without " +
                        subset.left_out.front()) != std::string::npos);
  }
  CHECK(subset_rows > 0);
}

TEST_CASE("the ranking is by the objective, ties by enumeration order") {
  const PlanSearchResult result =
      search_plans(catalog(), small_search("topologies/clusters/dgx-a100-1node.json", 8, 256));
  for (std::size_t k = 1; k < result.ranking.size(); ++k) {
    const PlanOutcome& a = result.outcomes[result.ranking[k - 1]];
    const PlanOutcome& b = result.outcomes[result.ranking[k]];
    CHECK(a.feasible());
    const double ta = a.objective(Objective::kTime);
    const double tb = b.objective(Objective::kTime);
    CHECK((ta < tb || (ta == tb && a.index < b.index)));
  }
  // The same search gives the same answer.
  const PlanSearchResult again =
      search_plans(catalog(), small_search("topologies/clusters/dgx-a100-1node.json", 8, 256));
  CHECK(again.ranking == result.ranking);
}

TEST_CASE("a budget below the cluster's hourly price leaves nothing to simulate") {
  PlanSearchOptions options = small_search("topologies/clusters/dgx-a100-1node.json", 8, 256);
  options.budget_usd_per_hour = 1.0;  // one DGX A100 lists at more than a dollar an hour
  const PlanSearchResult result = search_plans(catalog(), options);
  CHECK(result.simulated == 0);
  CHECK(result.over_budget > 0);
  CHECK(result.ranking.empty());
  CHECK(plan_text(result, options).find("no candidate fits in memory and runs") !=
        std::string::npos);
}

TEST_CASE("a batch too large to replay refuses every candidate before its timetable is built") {
  // --gbs 2147483647 used to end in bad_alloc, building a timetable of 2^31 microbatches per
  // candidate; --gbs 1e9 ran over a minute and 2 GB before printing anything.
  const PlanSearchOptions options =
      small_search("topologies/clusters/dgx-a100-1node.json", 2147483647, 256);
  const PlanSearchResult result = search_plans(catalog(), options);
  CHECK(result.enumerated > 0);
  CHECK(result.refused == result.enumerated);
  CHECK(result.simulated == 0);
  CHECK(result.outcomes.front().error.find("expected at most 2e+07 per simulated iteration") !=
        std::string::npos);
  CHECK(plan_text(result, options).find("no candidate fits in memory and runs: the first was refused: gbs "
                                        "2147483647") != std::string::npos);
}

TEST_CASE("the search tells its size once the space is enumerated, before anything is simulated") {
  // `plan --wide` on a 2,048-node cluster used to run for minutes without a word; the command
  // line now prints this count first when it is large.
  PlanSearchOptions options = small_search("topologies/clusters/dgx-a100-1node.json", 8, 256);
  std::size_t told_candidates = 0, told_subsets = 0, calls = 0;
  options.on_enumerated = [&](std::size_t candidates, const std::vector<GpuSubset>& subsets) {
    told_candidates = candidates;
    told_subsets = subsets.size();
    ++calls;
  };
  const PlanSearchResult result = search_plans(catalog(), options);
  CHECK(calls == 1);
  CHECK(told_candidates == result.enumerated);
  CHECK(told_subsets == result.subsets.size());
}

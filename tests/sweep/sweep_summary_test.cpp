// The summary of a sweep: fastest, cheapest and the Pareto front of time vs cost per million
// tokens, over feasible points only, the same whatever order the points finished in.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "tools/sweep/pareto_svg.hpp"
#include "tools/sweep/sweep_csv.hpp"
#include "tools/sweep/sweep_file.hpp"
#include "tools/sweep/sweep_summary.hpp"

using namespace hetsim::sweep;
using nlohmann::json;

namespace {

// A report line with the figures the summary reads: 1e6 / tokens_per_s seconds per million tokens.
json ran(std::size_t index, double tokens_per_s, double usd_per_million_tokens, bool oom = false) {
  json report{
      {"tokens_per_s", tokens_per_s},
      {"iteration_time_s", 1.0},
      {"cost_usd", {{"per_million_tokens", usd_per_million_tokens}, {"per_iteration", 2.0}}},
      {"peak_memory_gib", {{"max", 40.0}}},
      {"oom", oom ? json::array({json{{"gpu", 0}}}) : json::array()}};
  return {{"index", index}, {"point", {{"tp", index}}}, {"report", report}};
}

json failed(std::size_t index, const std::string& why) {
  return {{"index", index}, {"point", {{"tp", index}}}, {"error", why}};
}

// Seconds per million tokens: 1e6 / tokens/s. Point 0: 10 s, $5; 1: 5 s, $8; 2: 20 s, $4;
// 3: 10 s, $6 (dominated by 0); 4: 5 s, $8 (tied with 1: the lower index stands);
// 5: out of memory though fastest and cheapest; 6: invalid.
std::vector<json> sample() {
  return {ran(0, 1e5, 5),
          ran(1, 2e5, 8),
          ran(2, 5e4, 4),
          ran(3, 1e5, 6),
          ran(4, 2e5, 8),
          ran(5, 1e6, 1, true),
          failed(6, "--tp 3 does not divide 32 GPUs")};
}

std::vector<std::size_t> indexes(const std::vector<PointCosts>& points) {
  std::vector<std::size_t> out;
  for (const PointCosts& p : points) out.push_back(p.index);
  return out;
}

}  // namespace

TEST_CASE("fastest, cheapest and the Pareto front leave out failed and out-of-memory points") {
  const SweepSummary s = summarize(sample(), 8);
  CHECK(s.points == 8);
  CHECK(s.finished == 7);
  CHECK(s.invalid == 1);
  CHECK(s.out_of_memory == 1);
  CHECK(s.feasible.size() == 5);
  REQUIRE(s.fastest);
  CHECK(s.fastest->index == 1);
  CHECK(s.fastest->seconds_per_million_tokens == doctest::Approx(5.0));
  CHECK(s.cheapest->index == 2);
  CHECK(indexes(s.pareto_front) == std::vector<std::size_t>{1, 0, 2});
}

TEST_CASE("the summary does not depend on the order the points finished in") {
  std::vector<json> lines = sample();
  const SweepSummary reference = summarize(lines, 8);
  std::mt19937_64 random(12);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(lines.begin(), lines.end(), random);
    const SweepSummary s = summarize(lines, 8);
    CHECK(s.fastest->index == reference.fastest->index);
    CHECK(s.cheapest->index == reference.cheapest->index);
    CHECK(indexes(s.pareto_front) == indexes(reference.pareto_front));
    std::vector<json> sorted = lines;
    sort_by_index(sorted);
    std::vector<json> reference_sorted = sample();
    CHECK(summary_json(s, sorted) == summary_json(reference, reference_sorted));
  }
}

TEST_CASE("the text summary names the points") {
  std::vector<json> lines = sample();
  const std::string text = summary_text(summarize(lines, 8), lines);
  CHECK(text ==
        "7 of 8 points: 5 feasible, 1 out of memory, 1 invalid\n"
        "fastest:  point 1 {\"tp\":1}: 5 s and $8 per million tokens\n"
        "cheapest: point 2 {\"tp\":2}: 20 s and $4 per million tokens\n"
        "Pareto front of time vs cost (3 points, fastest first):\n"
        "  point 1 {\"tp\":1}: 5 s and $8 per million tokens\n"
        "  point 0 {\"tp\":0}: 10 s and $5 per million tokens\n"
        "  point 2 {\"tp\":2}: 20 s and $4 per million tokens\n");
  const std::vector<json> none{failed(0, "no")};
  CHECK(summary_text(summarize(none, 1), none) ==
        "1 of 1 points: 0 feasible, 0 out of memory, 1 invalid\nno feasible point\n");
}

TEST_CASE("the CSV has a row per point, figures or the quoted error") {
  const std::vector<json> lines{ran(0, 1e5, 5), failed(1, "bad \"tp\", see")};
  CHECK(sweep_csv(lines) ==
        "index,tp,status,iteration_time_s,tokens_per_s,mfu,bubble_fraction,peak_memory_gib,usd_per_"
        "iteration,"
        "usd_per_million_tokens,energy_kwh,error\n"
        "0,0,ok,1.0,100000.0,,,40.0,2.0,5.0,,\n"
        "1,1,invalid,,,,,,,,,\"bad \"\"tp\"\", see\"\n");
}

TEST_CASE("the plot draws every feasible point and the front over them") {
  std::vector<json> lines = sample();
  const std::string svg = pareto_svg(summarize(lines, 8), lines, "a <sweep>");
  CHECK(svg.rfind("<svg ", 0) == 0);
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = svg.find(what); at != std::string::npos; at = svg.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("r=\"3\"") == 5);    // feasible points
  CHECK(count("r=\"4.5\"") == 3);  // the front
  CHECK(count("<polyline") == 1);
  CHECK(svg.find("a &lt;sweep&gt;") != std::string::npos);
  CHECK(svg.find("point 1 {&quot;tp&quot;:1}") != std::string::npos);
  const std::vector<json> none{failed(0, "no")};
  CHECK(pareto_svg(summarize(none, 1), none, "t").find("no feasible point") != std::string::npos);
}

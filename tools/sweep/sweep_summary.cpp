// Best points and the Pareto front of a sweep.
#include "tools/sweep/sweep_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "tools/sweep/sweep_file.hpp"

namespace hetsim::sweep {

namespace {

nlohmann::json costs_json(const PointCosts& p, const std::vector<nlohmann::json>& lines_by_index) {
  return {{"index", p.index},
          {"point", line_at(lines_by_index, p.index)["point"]},
          {"seconds_per_million_tokens", p.seconds_per_million_tokens},
          {"usd_per_million_tokens", p.usd_per_million_tokens}};
}

std::string costs_text(const PointCosts& p, const std::vector<nlohmann::json>& lines_by_index) {
  return fmt::format("point {} {}: {:.4g} s and ${:.4g} per million tokens", p.index,
                     line_at(lines_by_index, p.index)["point"].dump(), p.seconds_per_million_tokens,
                     p.usd_per_million_tokens);
}

}  // namespace

SweepSummary summarize(const std::vector<nlohmann::json>& lines, std::size_t points) {
  SweepSummary summary;
  summary.points = points;
  summary.finished = lines.size();
  for (const nlohmann::json& line : lines) {
    if (line.contains("error")) {
      ++summary.invalid;
      continue;
    }
    const nlohmann::json& report = line["report"];
    // An iteration that processes no tokens has no time per token; it cannot compete either.
    if (!report["oom"].empty() || !(report["tokens_per_s"].get<double>() > 0)) {
      ++summary.out_of_memory;
      continue;
    }
    summary.feasible.push_back(PointCosts{line["index"].get<std::size_t>(),
                                          1e6 / report["tokens_per_s"].get<double>(),
                                          report["cost_usd"]["per_million_tokens"].get<double>()});
  }
  std::sort(summary.feasible.begin(), summary.feasible.end(),
            [](const PointCosts& a, const PointCosts& b) { return a.index < b.index; });
  if (summary.feasible.empty()) return summary;
  // By index first, so that min_element's first minimum is the lowest index among equals.
  summary.fastest = *std::min_element(
      summary.feasible.begin(), summary.feasible.end(), [](const auto& a, const auto& b) {
        return a.seconds_per_million_tokens < b.seconds_per_million_tokens;
      });
  summary.cheapest = *std::min_element(summary.feasible.begin(), summary.feasible.end(),
                                       [](const auto& a, const auto& b) {
                                         return a.usd_per_million_tokens < b.usd_per_million_tokens;
                                       });
  // Pareto front: scanning by time (then cost, then index), a point is on it when it is cheaper
  // than every faster-or-equal point before it.
  std::vector<PointCosts> by_time = summary.feasible;
  std::sort(by_time.begin(), by_time.end(), [](const PointCosts& a, const PointCosts& b) {
    return std::tie(a.seconds_per_million_tokens, a.usd_per_million_tokens, a.index) <
           std::tie(b.seconds_per_million_tokens, b.usd_per_million_tokens, b.index);
  });
  for (const PointCosts& p : by_time)
    if (summary.pareto_front.empty() ||
        p.usd_per_million_tokens < summary.pareto_front.back().usd_per_million_tokens)
      summary.pareto_front.push_back(p);
  return summary;
}

std::string summary_text(const SweepSummary& s, const std::vector<nlohmann::json>& lines_by_index) {
  std::string text =
      fmt::format("{} of {} points: {} feasible, {} out of memory, {} invalid\n", s.finished,
                  s.points, s.feasible.size(), s.out_of_memory, s.invalid);
  if (!s.fastest) return text + "no feasible point\n";
  text += "fastest:  " + costs_text(*s.fastest, lines_by_index) + "\n";
  text += "cheapest: " + costs_text(*s.cheapest, lines_by_index) + "\n";
  text += fmt::format("Pareto front of time vs cost ({} points, fastest first):\n",
                      s.pareto_front.size());
  for (const PointCosts& p : s.pareto_front) text += "  " + costs_text(p, lines_by_index) + "\n";
  return text;
}

nlohmann::json summary_json(const SweepSummary& s,
                            const std::vector<nlohmann::json>& lines_by_index) {
  nlohmann::json front = nlohmann::json::array();
  for (const PointCosts& p : s.pareto_front) front.push_back(costs_json(p, lines_by_index));
  return {{"points", s.points},
          {"finished", s.finished},
          {"feasible", s.feasible.size()},
          {"out_of_memory", s.out_of_memory},
          {"invalid", s.invalid},
          {"fastest", s.fastest ? costs_json(*s.fastest, lines_by_index) : nlohmann::json()},
          {"cheapest", s.cheapest ? costs_json(*s.cheapest, lines_by_index) : nlohmann::json()},
          {"pareto_front", front}};
}

}  // namespace hetsim::sweep

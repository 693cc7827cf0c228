// Drawing the time-cost plane of a sweep.
#include "tools/sweep/pareto_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/sweep/sweep_file.hpp"

namespace hetsim::sweep {

namespace {

constexpr double kWidth = 720, kHeight = 480;
constexpr double kLeft = 80, kRight = 24, kTop = 40, kBottom = 56;  // margins for labels, px

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A value range with round tick marks: 1, 2 or 5 times a power of ten apart, about five of them.
struct Axis {
  double low = 0, high = 1, step = 1;
  Axis(double min, double max) {
    const double pad = max > min ? (max - min) * 0.05 : std::max(std::abs(min) * 0.1, 1e-9);
    low = std::max(0.0, min - pad);
    high = max + pad;
    const double rough = (high - low) / 5;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    step = power * (rough / power < 1.5   ? 1
                    : rough / power < 3.5 ? 2
                    : rough / power < 7.5 ? 5
                                          : 10);
  }
  double fraction(double v) const { return (v - low) / (high - low); }
};

}  // namespace

std::string pareto_svg(const SweepSummary& summary,
                       const std::vector<nlohmann::json>& lines_by_index,
                       const std::string& title) {
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" "
      "fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" font-size=\"14\">{3}</text>\n",
      kWidth, kHeight, kLeft, xml_escaped(title));
  if (summary.feasible.empty())
    return svg + fmt::format("<text x=\"{}\" y=\"{}\">no feasible point</text>\n</svg>\n", kLeft,
                             kTop + plot_h / 2);

  const auto [min_t, max_t] = std::minmax_element(
      summary.feasible.begin(), summary.feasible.end(), [](const auto& a, const auto& b) {
        return a.seconds_per_million_tokens < b.seconds_per_million_tokens;
      });
  const auto [min_c, max_c] = std::minmax_element(
      summary.feasible.begin(), summary.feasible.end(), [](const auto& a, const auto& b) {
        return a.usd_per_million_tokens < b.usd_per_million_tokens;
      });
  const Axis x(min_t->seconds_per_million_tokens, max_t->seconds_per_million_tokens);
  const Axis y(min_c->usd_per_million_tokens, max_c->usd_per_million_tokens);
  const auto px = [&](double v) { return kLeft + x.fraction(v) * plot_w; };
  const auto py = [&](double v) { return kTop + (1 - y.fraction(v)) * plot_h; };

  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kLeft,
      kTop, plot_w, plot_h);
  for (double t = std::ceil(x.low / x.step) * x.step; t <= x.high; t += x.step)
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:.4g}</text>\n",
        px(t), kTop, kTop + plot_h, kTop + plot_h + 16, t);
  for (double c = std::ceil(y.low / y.step) * y.step; c <= y.high; c += y.step)
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:.4g}</text>\n",
        kLeft, py(c), kLeft + plot_w, kLeft - 6, py(c) + 4, c);
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">training time, seconds per million "
      "tokens</text>\n",
      kLeft + plot_w / 2, kHeight - 16);
  svg += fmt::format(
      "<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">cost, US$ per "
      "million "
      "tokens</text>\n",
      kTop + plot_h / 2);

  const auto point_title = [&](const PointCosts& p) {
    return xml_escaped(fmt::format("point {} {}: {:.4g} s, ${:.4g}", p.index,
                                   line_at(lines_by_index, p.index)["point"].dump(),
                                   p.seconds_per_million_tokens, p.usd_per_million_tokens));
  };
  for (const PointCosts& p : summary.feasible)
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#9aa\"><title>{}</title></circle>\n",
        px(p.seconds_per_million_tokens), py(p.usd_per_million_tokens), point_title(p));
  std::string path;
  for (const PointCosts& p : summary.pareto_front)
    path += fmt::format("{:.1f},{:.1f} ", px(p.seconds_per_million_tokens),
                        py(p.usd_per_million_tokens));
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#c33\" stroke-width=\"1.5\"/>\n", path);
  for (const PointCosts& p : summary.pareto_front)
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#c33\"><title>{}</title></circle>\n",
        px(p.seconds_per_million_tokens), py(p.usd_per_million_tokens), point_title(p));
  svg += fmt::format(
      "<text x=\"{}\" y=\"24\" text-anchor=\"end\" fill=\"#c33\">Pareto front ({} of {} feasible "
      "points)</text>\n</svg>\n",
      kWidth - kRight, summary.pareto_front.size(), summary.feasible.size());
  return svg;
}

}  // namespace hetsim::sweep

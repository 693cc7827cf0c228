#include "traces/schedule_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

namespace hetsim {

namespace {

// Layout, in SVG user units (pixels).
constexpr double kLeft = 70.0;  // rank labels
constexpr double kPlotWidth = 960.0;
constexpr double kRight = 20.0;
constexpr double kTop = 40.0;  // title
constexpr double kComputeHeight = 26.0;
constexpr double kCopyHeight = 12.0;
constexpr double kRowGap = 6.0;
constexpr double kAxisHeight = 44.0;  // ticks, numbers and the axis label
constexpr double kLegendRowHeight = 22.0;
constexpr std::size_t kLegendPerRow = 5;
constexpr double kSwatch = 14.0;
constexpr double kLegendItemWidth = kPlotWidth / kLegendPerRow;

struct KindStyle {
  char kind;
  std::string_view name;
  std::string_view even_chunk_fill;  // chunk 0, 2, ...
  std::string_view odd_chunk_fill;   // chunk 1, 3, ...: a darker shade of the same hue
};

// Hues as the zero-bubble paper draws them: forward blue, backward green, weight purple.
constexpr std::array<KindStyle, 5> kStyles{{
    {'F', "forward", "#9fc5e8", "#3d85c6"},
    {'B', "backward", "#b6d7a8", "#6aa84f"},
    {'W', "weight grad", "#c9b8e8", "#8e7cc3"},
    {'O', "offload", "#f9cb9c", "#e69138"},
    {'R', "reload", "#ffe599", "#f1c232"},
}};

const KindStyle& style_of(char kind) {
  for (const KindStyle& style : kStyles) {
    if (style.kind == kind) return style;
  }
  return kStyles[0];  // unreachable: check_timed_ops admits only the kinds above
}

bool is_copy(char kind) { return kind == 'O' || kind == 'R'; }

std::string xml_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

struct TimeAxis {
  double per_second;  // display units per second
  std::string_view unit;
};

// The largest of s, ms, us in which the schedule's length is at least 1.
TimeAxis axis_for(double length_s) {
  if (length_s >= 1.0 || length_s <= 0.0) return {1.0, "s"};
  if (length_s >= 1e-3) return {1e3, "ms"};
  return {1e6, "us"};
}

// A 1, 2 or 5 times a power of ten step giving at most about 8 ticks over `length`.
double tick_step(double length) {
  const double raw = length / 8.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (factor * magnitude >= raw) return factor * magnitude;
  }
  return 10.0 * magnitude;
}

struct LegendEntry {
  std::string label;
  std::string_view fill;
};

// present[kind index][chunk parity]: whether such ops exist. Chunk names appear only when the
// schedule has more than one chunk.
std::vector<LegendEntry> legend_entries(
    const std::array<std::array<bool, 2>, kStyles.size()>& present, int max_chunk) {
  std::vector<LegendEntry> entries;
  for (std::size_t k = 0; k < kStyles.size(); ++k) {
    const KindStyle& style = kStyles[k];
    if (present[k][0]) {
      entries.push_back({max_chunk > 0 ? fmt::format("{} {} (chunk 0{})", style.kind, style.name,
                                                     max_chunk > 1 ? ", 2, ..." : "")
                                       : fmt::format("{} {}", style.kind, style.name),
                         style.even_chunk_fill});
    }
    if (present[k][1]) {
      entries.push_back({fmt::format("{} {} (chunk 1{})", style.kind, style.name,
                                     max_chunk > 2 ? ", 3, ..." : ""),
                         style.odd_chunk_fill});
    }
  }
  return entries;
}

}  // namespace

std::string schedule_svg(const std::vector<TimedOp>& ops, int ranks, const std::string& title) {
  check_timed_ops(ops, ranks);
  double length_s = 0.0;
  bool has_copies = false;
  int max_chunk = 0;
  // Which (kind, chunk parity) pairs appear, for the legend: [kind index][parity].
  std::array<std::array<bool, 2>, kStyles.size()> present{};
  for (const TimedOp& op : ops) {
    length_s = std::max(length_s, op.end);
    has_copies = has_copies || is_copy(op.kind);
    max_chunk = std::max(max_chunk, op.chunk);
    for (std::size_t k = 0; k < kStyles.size(); ++k) {
      if (kStyles[k].kind == op.kind) present[k][static_cast<std::size_t>(op.chunk % 2)] = true;
    }
  }
  const double scale = length_s > 0.0 ? kPlotWidth / length_s : 0.0;  // px per second
  const double row_height = kComputeHeight + (has_copies ? kCopyHeight : 0.0) + kRowGap;
  const double rows_bottom = kTop + row_height * ranks;
  const double width = kLeft + kPlotWidth + kRight;
  const std::vector<LegendEntry> legend = legend_entries(present, max_chunk);
  const std::size_t legend_rows = (legend.size() + kLegendPerRow - 1) / kLegendPerRow;
  const double height =
      rows_bottom + kAxisHeight + kLegendRowHeight * static_cast<double>(legend_rows) + 8.0;
  const TimeAxis axis = axis_for(length_s);

  std::string svg;
  auto out = std::back_inserter(svg);
  fmt::format_to(out,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                 "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\">\n",
                 width, height);
  fmt::format_to(out,
                 "<text x=\"{:.2f}\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">{}</text>\n",
                 kLeft + kPlotWidth / 2.0, xml_escape(title));

  // Rank labels and a baseline per row; nothing else is drawn where a rank idles.
  for (int rank = 0; rank < ranks; ++rank) {
    const double y = kTop + row_height * rank;
    fmt::format_to(out,
                   "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"12\" text-anchor=\"end\">rank "
                   "{}</text>\n",
                   kLeft - 8.0, y + kComputeHeight / 2.0 + 4.0, rank);
    fmt::format_to(
        out,
        "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#cccccc\" "
        "stroke-width=\"0.5\"/>\n",
        kLeft, y + row_height - kRowGap / 2.0, kLeft + kPlotWidth, y + row_height - kRowGap / 2.0);
  }

  for (const TimedOp& op : ops) {
    const KindStyle& style = style_of(op.kind);
    const bool copy = is_copy(op.kind);
    const double x = kLeft + op.start * scale;
    const double w = (op.end - op.start) * scale;
    const double y = kTop + row_height * op.rank + (copy ? kComputeHeight : 0.0);
    const double h = copy ? kCopyHeight - 1.0 : kComputeHeight - 2.0;
    const std::string_view fill = op.chunk % 2 == 0 ? style.even_chunk_fill : style.odd_chunk_fill;
    fmt::format_to(out,
                   "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
                   "fill=\"{}\" stroke=\"#333333\" stroke-width=\"0.5\"><title>{} microbatch {} "
                   "chunk {}: {:.6g} to {:.6g} {}</title></rect>\n",
                   x, y, w, h, fill, op.kind, op.microbatch, op.chunk, op.start * axis.per_second,
                   op.end * axis.per_second, axis.unit);
    fmt::format_to(out,
                   "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"{}\" text-anchor=\"middle\">{}"
                   "</text>\n",
                   x + w / 2.0, y + h / 2.0 + (copy ? 3.0 : 4.0), copy ? 8 : 11, op.microbatch);
  }

  // Time axis with 1-2-5 ticks in the chosen unit.
  fmt::format_to(
      out, "<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#000000\"/>\n",
      kLeft, rows_bottom, kLeft + kPlotWidth, rows_bottom);
  if (length_s > 0.0) {
    const double length = length_s * axis.per_second;
    const double step = tick_step(length);
    for (int i = 0; i * step <= length * (1.0 + 1e-9); ++i) {
      const double x = kLeft + (i * step / axis.per_second) * scale;
      fmt::format_to(out,
                     "<line x1=\"{0:.2f}\" y1=\"{1:.2f}\" x2=\"{0:.2f}\" y2=\"{2:.2f}\" "
                     "stroke=\"#000000\"/>\n",
                     x, rows_bottom, rows_bottom + 4.0);
      fmt::format_to(out,
                     "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"10\" text-anchor=\"middle\">{:g}"
                     "</text>\n",
                     x, rows_bottom + 16.0, i * step);
    }
  }
  fmt::format_to(out,
                 "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"12\" text-anchor=\"middle\">time "
                 "({})</text>\n",
                 kLeft + kPlotWidth / 2.0, rows_bottom + 34.0, axis.unit);

  // Legend: one swatch per kind and chunk parity present, in a fixed order, wrapped in rows.
  const double legend_top = rows_bottom + kAxisHeight;
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const double x = kLeft + kLegendItemWidth * static_cast<double>(i % kLegendPerRow);
    const double y = legend_top + kLegendRowHeight * static_cast<double>(i / kLegendPerRow) + 4.0;
    fmt::format_to(out,
                   "<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
                   "fill=\"{}\" stroke=\"#333333\" stroke-width=\"0.5\"/>\n",
                   x, y, kSwatch, kSwatch, legend[i].fill);
    fmt::format_to(out, "<text x=\"{:.2f}\" y=\"{:.2f}\" font-size=\"11\">{}</text>\n",
                   x + kSwatch + 5.0, y + kSwatch - 3.0, xml_escape(legend[i].label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hetsim

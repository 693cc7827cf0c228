// zb-auto against the zero-bubble paper's own figures (Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024): Table 9 (Appendix D) gives the profiled t_F, t_B, t_W and T_comm of
// each setting, Table 5 the bubble rates they yield for ZB-H2 and for ZB-1p and ZB-2p (the
// automatic schedule with a p M_B and a 2p M_B memory limit). Bubble rate, as Sec. 5.3 defines it:
// (cost - m (t_F + t_B + t_W)) / cost, cost = the longest single-rank span.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "schedules/evaluator.hpp"
#include "schedules/generators.hpp"
#include "schedules/zb_auto.hpp"

namespace {

struct PaperRow {
  const char* model;
  int p;
  int m;
  double f_ms, b_ms, w_ms, comm_ms;  // Table 9
  int hidden;                        // Table 3 (h)
  int heads;                         // Table 3 (a)
  double zb_h2;                      // Table 5
  double zb_1p;                      // Table 5
  double zb_2p;                      // Table 5
};

// Table 9 times in ms, Table 3 shapes, Table 5 bubble rates (ZB-H2, ZB-1p, ZB-2p).
constexpr PaperRow kRows[] = {
    {"1.5B", 8, 24, 18.522, 18.086, 9.337, 0.601, 2304, 24, 0.1083, 0.1585, 0.0433},
    {"1.5B", 8, 32, 18.513, 18.086, 9.331, 0.626, 2304, 24, 0.0837, 0.1242, 0.0039},
    {"1.5B", 8, 64, 18.546, 18.097, 9.321, 0.762, 2304, 24, 0.0444, 0.0674, 0.0026},
    {"6.2B", 8, 24, 29.718, 29.444, 19.927, 0.527, 4096, 32, 0.0698, 0.1323, 0.0029},
    {"6.2B", 8, 32, 29.802, 29.428, 19.530, 0.577, 4096, 32, 0.0559, 0.1045, 0.0022},
    {"6.2B", 8, 64, 29.935, 29.621, 19.388, 0.535, 4096, 32, 0.0294, 0.0554, 0.0010},
    {"14.6B", 16, 48, 11.347, 11.248, 8.132, 0.377, 5120, 40, 0.0672, 0.1397, 0.0066},
    {"14.6B", 16, 64, 11.307, 11.254, 8.101, 0.379, 5120, 40, 0.0516, 0.1088, 0.0054},
    {"14.6B", 16, 128, 11.325, 11.308, 8.109, 0.378, 5120, 40, 0.0266, 0.0576, 0.0028},
    {"28.3B", 32, 96, 10.419, 10.207, 7.715, 0.408, 6144, 48, 0.0641, 0.1421, 0.0038},
    {"28.3B", 32, 128, 10.408, 10.204, 7.703, 0.408, 6144, 48, 0.0490, 0.1106, 0.0029},
    {"28.3B", 32, 256, 10.402, 10.248, 7.698, 0.460, 6144, 48, 0.0257, 0.0594, 0.0018},
};

constexpr int kSequence = 1024;  // Table 3: every model at sequence length 1024
// Half a unit of Table 5's last decimal.
constexpr double kHalfLastDigit = 0.5e-4 + 1e-12;

double bubble_rate(const hetsim::Timetable& t, const hetsim::UniformOpTimes& times) {
  const double cost = hetsim::evaluate(t, times).longest_span_s();
  return (cost - t.microbatches * (times.forward_s + times.backward_s + times.weight_s)) / cost;
}

}  // namespace

TEST_CASE("zb-auto reproduces the paper's ZB-2p and ZB-1p bubble rates (Table 5)") {
  // The paper's Table 5 rounds to 4 decimals, so each rate must agree within half a unit of
  // the last (5e-5). Its ZB-2p/ZB-1p come from the heuristic refined by an ILP (Sec. 3,
  // Appendix G); hetsim runs the heuristic alone, which reaches the same rates on every row.
  // ZB-1p (limit p) equals ZB-H1 in the paper, ZB-H2 (2p-1 memory) trails ZB-2p by 2.5x to 30x.
  for (const PaperRow& row : kRows) {
    CAPTURE(row.model);
    CAPTURE(row.m);
    const hetsim::UniformOpTimes times{row.f_ms, row.b_ms, row.w_ms, row.comm_ms};
    // Table 1, as the repository's scheduler counts it: M_B = sb(34h + 5as), M_W = 32sbh.
    const double share = 32.0 * row.hidden / (34.0 * row.hidden + 5.0 * row.heads * kSequence);
    const auto automatic = [&](int limit) {
      const hetsim::ZbAutoOptions o{row.f_ms, row.b_ms, row.w_ms, row.comm_ms, limit, share};
      return bubble_rate(hetsim::make_zb_auto(row.p, row.m, o), times);
    };
    const double zb_2p = automatic(2 * row.p);
    const double zb_1p = automatic(row.p);
    const double zb_h2 = bubble_rate(hetsim::make_zb_h2(row.p, row.m), times);
    std::printf(
        "%-5s p=%-2d m=%-3d bubble rate ZB-2p %.5f (paper %.4f), ZB-1p %.5f (paper %.4f), "
        "ZB-H2 %.5f (paper %.4f)\n",
        row.model, row.p, row.m, zb_2p, row.zb_2p, zb_1p, row.zb_1p, zb_h2, row.zb_h2);
    CHECK(std::fabs(zb_2p - row.zb_2p) <= kHalfLastDigit);
    CHECK(std::fabs(zb_1p - row.zb_1p) <= kHalfLastDigit);
    CHECK(std::fabs(zb_h2 - row.zb_h2) <= kHalfLastDigit);
  }
}

#pragma once
// zb-auto: the automatic scheduler of Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024,
// Sec. 3.1, the heuristic that seeds their ILP), for one chunk per rank with split backward.
#include "schedules/timetable.hpp"

namespace hetsim {

struct ZbAutoOptions {
  double forward_s = 1.0;   // t_F of one stage, > 0
  double backward_s = 1.0;  // t_B (input gradient only), > 0
  double weight_s = 1.0;    // t_W (weight gradient), > 0
  double transfer_s = 0.0;  // T_comm, added to every cross-rank dependency, >= 0
  // Per-rank activation limit in units of M_B (one microbatch's activations of one stage); >= 1.
  // 0 means 2p-1, ZB-H2's memory. The paper's ZB-2p is 2p, ZB-1p is p.
  int memory_limit = 0;
  // M_W / M_B in [0, 1]: the share of a microbatch's activations that B keeps for W. F adds 1,
  // B frees 1 - share, W the rest (Qi et al. Table 1 and Appendix G: M_B = sb(34h + 5as),
  // M_W = 32sbh). 1 keeps everything until W, the bound M_W <= M_B that peak_activations(
  // kAtWeight) counts; a model gives its own share (sim/training_run.cpp).
  double weight_memory_share = 1.0;
};

// The search's size bound: 8 heuristic runs place 3pm ops each; p = 256, m = 1024 (6.3 M
// placements) takes about a second (BENCHMARKS.md), so this many keeps it within seconds.
inline constexpr double kZbAutoMaxOpPlacements = 8e6;

// The best of the paper's heuristic over its grid of three binary choices (8 runs), and ZB-H1 and
// ZB-H2 where their peaks fit the limit, by longest single-rank span (then makespan), evaluated
// with `options`' times; every rank stays within the memory limit. Throws PlanError for p, m or a
// limit below 1, non-positive times, a share outside [0, 1], and p x m beyond the search bound.
Timetable make_zb_auto(int ranks, int microbatches, const ZbAutoOptions& options);

}  // namespace hetsim

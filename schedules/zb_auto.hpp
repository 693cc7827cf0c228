#pragma once
// zb-auto: the automatic scheduler of Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024,
// Sec. 3.2, the heuristic that seeds their ILP), for one chunk per rank with split backward.
#include "schedules/timetable.hpp"

namespace hetsim {

struct ZbAutoOptions {
  double forward_s = 1.0;   // t_F of one stage, > 0
  double backward_s = 1.0;  // t_B (input gradient only), > 0
  double weight_s = 1.0;    // t_W (weight gradient), > 0
  double transfer_s = 0.0;  // T_comm, added to every cross-rank dependency, >= 0
  // Per-rank activation limit in microbatches of one stage, counted +1 at F and -1 at W (the
  // paper's M_limit with M_W taken as M_B); >= 1. 0 means 2p-1, ZB-H2's memory.
  int memory_limit = 0;
};

// The best of the heuristic's 3p candidates (p warm-up sizes x 3 rules for when W fills a wait) by
// longest single-rank span, evaluated with `options`' times; every rank stays within the memory
// limit. Throws PlanError for p, m or a limit below 1 and for non-positive times.
Timetable make_zb_auto(int ranks, int microbatches, const ZbAutoOptions& options);

}  // namespace hetsim

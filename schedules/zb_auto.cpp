// zb-auto (Qi et al., ICLR 2024, Sec. 3.2 "Heuristic algorithm"; the zero-bubble repository's
// auto_schedule.py runs it before its ILP). A list scheduler that plays the pipeline forward in
// time, deciding each rank's next op when the rank falls free (ranks in order of free time):
//   * a B whose input has arrived goes first (B's are on the critical path);
//   * then a F, if rank r has fewer than w_r forwards without their B (the warm-up size) and
//     the rank is below the memory limit, else a W first to free memory;
//   * with nothing arrived, a pending W fills the wait if the next known arrival is at least
//     t_W away; otherwise the rank idles until it. Two more W rules make candidates too: fill
//     every wait, or hold W's back until memory is full or the rank's B's are done (ZB-H1's
//     way of keeping W's for the tail).
// Warm-up sizes: w_r = min(m, limit, p - r + min(x, p - r - 1)) for x = 0 .. p-1, from 1F1B's
// p - r (x = 0, ZB-H1's shape) to 2(p - r) - 1 (x = p-1, ZB-H2's), the paper's "as many F's as
// the memory allows before the first B" as a swept parameter. Each candidate is
// replayed with evaluate() (3p candidates) and the shortest longest single-rank span wins (then
// makespan, then the earlier candidate); the paper's objective, which leaves out the stagger of
// first starts. ZB-H1 and ZB-H2 join the candidates when their peaks fit the limit.
#include "schedules/zb_auto.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/error.hpp"
#include "schedules/evaluator.hpp"
#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::infinity();

// When a pending W may run while a rank waits for inputs.
enum class WeightFill {
  kLongGaps,  // when the next known arrival is at least t_W away (the paper's rule)
  kAnyGap,    // whenever the rank would idle
  kWhenFull,  // only to free memory for a F, and after the rank's last B: W's are held back
              // for the tail, as ZB-H1 does
};

Timetable greedy_candidate(int ranks, int m, const ZbAutoOptions& o, int limit, int extra,
                           WeightFill fill) {
  Timetable t = empty_timetable("zb-auto", ranks, m, 1, true);
  const auto p = static_cast<std::size_t>(ranks);
  std::vector<std::vector<double>> f_done(p, std::vector<double>(m, kUnknown));
  std::vector<std::vector<double>> b_done(p, std::vector<double>(m, kUnknown));
  std::vector<int> f(p, 0), b(p, 0), w(p, 0), warm(p, 0);
  std::vector<double> free_at(p, 0.0);
  std::vector<char> waiting(p, 0);
  for (int r = 0; r < ranks; ++r)
    warm[r] = std::min({m, limit, ranks - r + std::min(extra, ranks - r - 1)});
  const auto finished = [&](int r) { return w[r] == m; };
  while (true) {
    int r = -1;
    for (int q = 0; q < ranks; ++q)
      if (!finished(q) && !waiting[q] && (r < 0 || free_at[q] < free_at[r])) r = q;
    if (r < 0) {
      for (int q = 0; q < ranks; ++q)
        if (!finished(q)) throw PlanError("zb-auto: internal error: every rank waits");
      break;
    }
    const double now = free_at[r];
    // When the next B and F of rank r can start (kUnknown: their input is not yet scheduled).
    double b_at = kUnknown;
    if (b[r] < f[r]) b_at = r + 1 == ranks ? f_done[r][b[r]] : b_done[r + 1][b[r]] + o.transfer_s;
    double f_at = kUnknown;
    if (f[r] < m && f[r] - b[r] < warm[r]) f_at = r == 0 ? 0.0 : f_done[r - 1][f[r]] + o.transfer_s;
    const bool memory_full = f[r] - w[r] >= limit;
    const auto run = [&](OpKind kind) {
      double d = o.weight_s;
      if (kind == OpKind::kForward) {
        d = o.forward_s;
        f_done[r][f[r]] = now + d;
        t.ops[r].push_back(forward(f[r]++));
      } else if (kind == OpKind::kBackward) {
        d = o.backward_s;
        b_done[r][b[r]] = now + d;
        t.ops[r].push_back(backward(b[r]++));
      } else {
        t.ops[r].push_back(weight(w[r]++));
      }
      free_at[r] = now + d;
      std::fill(waiting.begin(), waiting.end(), 0);
    };
    if (b_at <= now) {
      run(OpKind::kBackward);
    } else if (f_at <= now && !memory_full) {
      run(OpKind::kForward);
    } else if (w[r] < b[r] &&
               (f_at <= now || b[r] == m ||
                (fill != WeightFill::kWhenFull &&
                 ((b_at >= kUnknown && f_at >= kUnknown) || fill == WeightFill::kAnyGap ||
                  std::min(b_at, f_at) - now >= o.weight_s)))) {
      // Memory full with a F waiting, the tail, or a wait to fill. (A B or F already
      // scheduled upstream arrives at a known time; an unscheduled one, later than any.)
      run(OpKind::kWeight);
    } else if (std::min(b_at, f_at) < kUnknown) {
      free_at[r] = std::min(b_at, f_at);  // idle until the next known arrival
    } else {
      waiting[r] = 1;  // nothing known yet: wait for another rank to schedule something
    }
  }
  return t;
}

}  // namespace

Timetable make_zb_auto(int ranks, int microbatches, const ZbAutoOptions& options) {
  require_at_least("zb-auto", "pipeline ranks p", ranks, 1);
  require_at_least("zb-auto", "microbatches m", microbatches, 1);
  const auto positive = [](const char* name, double value) {
    if (!(value > 0.0))
      throw PlanError(fmt::format("zb-auto: {} must be > 0 (got {}), e.g. 1", name, value));
  };
  positive("forward time t_F", options.forward_s);
  positive("backward time t_B", options.backward_s);
  positive("weight-gradient time t_W", options.weight_s);
  if (!(options.transfer_s >= 0.0))
    throw PlanError(
        fmt::format("zb-auto: transfer time must be >= 0 (got {}), e.g. 0", options.transfer_s));
  if (options.memory_limit < 0)
    throw PlanError(
        fmt::format("zb-auto: memory limit must be >= 1 microbatch, or 0 for 2p-1 = {} (got {})",
                    2 * ranks - 1, options.memory_limit));
  const int limit = options.memory_limit == 0 ? 2 * ranks - 1 : options.memory_limit;
  const UniformOpTimes times{options.forward_s, options.backward_s, options.weight_s,
                             options.transfer_s};
  Timetable best;
  double best_span = kUnknown;
  double best_makespan = kUnknown;
  const auto consider = [&](Timetable t) {
    const TimetableTiming timing = evaluate(t, times);  // validates
    const double span = timing.longest_span_s();
    if (span < best_span || (span == best_span && timing.makespan_s < best_makespan)) {
      best_span = span;
      best_makespan = timing.makespan_s;
      best = std::move(t);
    }
  };
  for (int extra = 0; extra < ranks; ++extra)
    for (const WeightFill fill :
         {WeightFill::kLongGaps, WeightFill::kAnyGap, WeightFill::kWhenFull})
      consider(greedy_candidate(ranks, microbatches, options, limit, extra, fill));
  // The handcrafted schedules that fit the limit seed the search, as the paper seeds its ILP
  // with the heuristic: at p microbatches the greedy alone trails ZB-H1 by up to (p-1)/2 t
  // (it spends W's in the steady state that ZB-H1 keeps for the tail).
  const auto peak = [](const Timetable& t) {
    const auto peaks = peak_activations(t, ActivationRelease::kAtWeight);
    return *std::max_element(peaks.begin(), peaks.end());
  };
  for (Timetable t : {make_zb_h1(ranks, microbatches), make_zb_h2(ranks, microbatches)}) {
    if (peak(t) > limit) continue;
    t.kind = "zb-auto";
    consider(std::move(t));
  }
  return best;
}

}  // namespace hetsim

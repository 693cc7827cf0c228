// zb-auto (Qi et al., ICLR 2024, Sec. 3.1 "The heuristic algorithm"; the zero-bubble
// repository's auto_schedule.py runs it before its ILP). The pipeline is built microbatch by
// microbatch, each op placed at the earliest time its rank and its input allow:
//   * warm-up: every stage runs F0, then, from the last stage up, as many more F's as fit the
//     memory limit and the time until the stage's first B can arrive (stage s keeps fewer than
//     stage s-1); then B0 runs from the last stage to the first;
//   * round i: every stage with F's left runs one more F, then B_i runs from the last stage up.
//     Before each F or B, W's fill the wait for its input while they fit in it; a shorter wait
//     gets one more W when it would otherwise become the largest stage bubble so far, and W's
//     also run when the memory limit leaves no room for the next F (F adds 1 M_B, B frees
//     1 - share of it, W the share). Stage 0, whose B's feed no other stage, runs its pending W's
//     before each B once its F's are done;
//   * the rest of each stage's W's run at its end.
// Three binary choices (the paper's "binary hyperparameters", grid-searched): whether the last
// warm-up F may delay the first B, whether a stage two or more F's ahead of the next may skip an
// F that would not delay it, and whether W's fill waits that would not grow the largest bubble.
// Each run keeps its own op times, so no replay is needed to rank it; the shortest longest
// single-rank span wins (the paper's objective (3), Appendix G), then the makespan.
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

// Memory comparisons in units of M_B, where shares like 0.37 accumulate rounding.
constexpr double kMemoryEpsilon = 1e-9;

struct Knobs {
  bool warmup_may_delay_first_b = false;
  bool skip_f_when_ahead = false;
  bool fill_short_waits = false;
};

struct Ranking {
  double span_s = std::numeric_limits<double>::infinity();
  double makespan_s = std::numeric_limits<double>::infinity();
  bool better_than(const Ranking& other) const {
    return span_s < other.span_s || (span_s == other.span_s && makespan_s < other.makespan_s);
  }
};

// One run of the heuristic: per stage, op counts, the time it falls free, its memory and its
// bubble so far; per (stage, microbatch), when its F and B end (flat vectors, reused).
class Heuristic {
 public:
  Heuristic(int ranks, int m, const ZbAutoOptions& o, double limit)
      : p_(ranks), m_(m), o_(o), limit_(limit) {}

  Timetable run(const Knobs& knobs, Ranking& ranking) {
    knobs_ = knobs;
    t_ = empty_timetable("zb-auto", p_, m_, 1, true);
    for (auto& ops : t_.ops) ops.reserve(3 * static_cast<std::size_t>(m_));
    const auto p = static_cast<std::size_t>(p_);
    f_.assign(p, 0);
    b_.assign(p, 0);
    w_.assign(p, 0);
    free_at_.assign(p, 0.0);
    memory_.assign(p, 0.0);
    bubble_.assign(p, 0.0);
    largest_bubble_ = 0.0;
    f_end_.assign(p * m_, 0.0);
    b_end_.assign(p * m_, 0.0);
    warm_up();
    for (int i = 1; i < m_; ++i) steady_round(i);
    for (int s = 0; s < p_; ++s)
      while (w_[s] < m_) place(s, OpKind::kWeight);
    ranking = Ranking{0.0, 0.0};
    for (int s = 0; s < p_; ++s) {
      ranking.span_s = std::max(ranking.span_s, free_at_[s] - (f_end(s, 0) - o_.forward_s));
      ranking.makespan_s = std::max(ranking.makespan_s, free_at_[s]);
    }
    return std::move(t_);
  }

 private:
  double& f_end(int s, int mb) { return f_end_[static_cast<std::size_t>(s) * m_ + mb]; }
  double& b_end(int s, int mb) { return b_end_[static_cast<std::size_t>(s) * m_ + mb]; }
  bool f_fits(int s) const { return memory_[s] + 1.0 <= limit_ + kMemoryEpsilon; }

  void place(int s, OpKind kind) {
    double start = free_at_[s];
    double duration = o_.weight_s;
    if (kind == OpKind::kForward) {
      duration = o_.forward_s;
      if (s > 0) start = std::max(start, f_end(s - 1, f_[s]) + o_.transfer_s);
    } else if (kind == OpKind::kBackward) {
      duration = o_.backward_s;
      if (s + 1 < p_) start = std::max(start, b_end(s + 1, b_[s]) + o_.transfer_s);
    }
    if (f_[s] > 0) {  // the wait before a stage's first op is the stagger, not a bubble
      bubble_[s] += start - free_at_[s];
      largest_bubble_ = std::max(largest_bubble_, bubble_[s]);
    }
    free_at_[s] = start + duration;
    if (kind == OpKind::kForward) {
      f_end(s, f_[s]) = free_at_[s];
      memory_[s] += 1.0;
      t_.ops[s].push_back(forward(f_[s]++));
    } else if (kind == OpKind::kBackward) {
      b_end(s, b_[s]) = free_at_[s];
      memory_[s] -= 1.0 - o_.weight_memory_share;
      t_.ops[s].push_back(backward(b_[s]++));
    } else {
      memory_[s] -= o_.weight_memory_share;
      t_.ops[s].push_back(weight(w_[s]++));
    }
  }

  // W's while the wait for an input arriving at `arrival` holds them, and one more when the wait
  // would grow the largest bubble (or always, with fill_short_waits).
  void fill_wait(int s, double arrival) {
    while (w_[s] < b_[s] && free_at_[s] + o_.weight_s <= arrival) place(s, OpKind::kWeight);
    if (w_[s] < b_[s] && free_at_[s] < arrival &&
        (knobs_.fill_short_waits || arrival - free_at_[s] > largest_bubble_ - bubble_[s]))
      place(s, OpKind::kWeight);
  }

  void make_room_for_forward(int s) {
    while (!f_fits(s)) {
      if (w_[s] >= b_[s])
        throw PlanError(fmt::format(
            "zb-auto: internal error: stage {} has no W left to free memory for F{}", s, f_[s]));
      place(s, OpKind::kWeight);
    }
  }

  void warm_up() {
    for (int s = 0; s < p_; ++s) place(s, OpKind::kForward);
    // From the last stage up: when B0 can reach stage s, and how many F's fill the time before.
    std::vector<int> extra(static_cast<std::size_t>(p_), 0);
    double b0_end = f_end(p_ - 1, 0) + o_.backward_s;
    for (int s = p_ - 2; s >= 0; --s) {
      const double arrival = b0_end + o_.transfer_s;
      double memory = memory_[s];
      double at = free_at_[s];
      while (f_[s] + extra[s] < m_ && memory + 1.0 <= limit_ + kMemoryEpsilon) {
        if (knobs_.warmup_may_delay_first_b ? at >= arrival : at + o_.forward_s > arrival) break;
        memory += 1.0;
        at += o_.forward_s;
        ++extra[s];
      }
      b0_end = std::max(at, arrival) + o_.backward_s;
    }
    // Stage s keeps fewer warm-up F's than stage s-1 (unless both run out of microbatches), so
    // every F's input is placed before it.
    for (int s = 1; s < p_; ++s) {
      while (extra[s] > 0 && extra[s] >= extra[s - 1] && f_[s] + extra[s] < m_) --extra[s];
      extra[s] = std::min(extra[s], extra[s - 1]);
    }
    for (int s = 0; s < p_; ++s)
      for (int k = 0; k < extra[s]; ++k) place(s, OpKind::kForward);
    for (int s = p_ - 1; s >= 0; --s) place(s, OpKind::kBackward);
  }

  // Whether stage s, two or more F's ahead of stage s+1, skips this round's F: when it could not
  // finish F (and the W's its memory needs first) before stage s+1 is done with its next F and B,
  // and waiting would not grow the largest bubble.
  bool skips_forward(int s) const {
    const double next_done = free_at_[s + 1] + o_.forward_s + o_.backward_s + o_.transfer_s;
    if (free_at_[s] >= next_done) return true;
    double memory = memory_[s] + 1.0;
    double weights_s = 0.0;
    for (int k = w_[s]; memory > limit_ + kMemoryEpsilon && k < b_[s]; ++k) {
      memory -= o_.weight_memory_share;
      weights_s += o_.weight_s;
    }
    if (free_at_[s] + o_.forward_s + weights_s <= next_done) return false;
    return next_done - free_at_[s] <= largest_bubble_ - bubble_[s];
  }

  void steady_round(int i) {
    std::vector<char> wants_f(static_cast<std::size_t>(p_), 0);
    for (int s = 0; s < p_; ++s)
      wants_f[s] = f_[s] < m_ && !(knobs_.skip_f_when_ahead && s + 1 < p_ &&
                                   f_[s] >= f_[s + 1] + 2 && skips_forward(s));
    // A stage runs a F only if the stage after it does: it stays at least one F ahead.
    for (int s = p_ - 2; s >= 0; --s) wants_f[s] = wants_f[s] && wants_f[s + 1];
    for (int s = 0; s < p_; ++s) {
      if (!wants_f[s]) continue;
      make_room_for_forward(s);
      if (s > 0) fill_wait(s, f_end(s - 1, f_[s]) + o_.transfer_s);
      place(s, OpKind::kForward);
    }
    for (int s = p_ - 1; s >= 0; --s) {
      if (s + 1 < p_) fill_wait(s, b_end(s + 1, i) + o_.transfer_s);
      if (s == 0 && f_[s] == m_)
        while (w_[s] < b_[s]) place(s, OpKind::kWeight);
      place(s, OpKind::kBackward);
    }
  }

  const int p_;
  const int m_;
  const ZbAutoOptions& o_;
  const double limit_;
  Knobs knobs_;
  Timetable t_;
  std::vector<int> f_, b_, w_;
  std::vector<double> free_at_, memory_, bubble_;
  double largest_bubble_ = 0.0;
  std::vector<double> f_end_, b_end_;
};

// The most activation memory any rank holds, in M_B, with B freeing 1 - share and W the share.
double peak_memory(const Timetable& t, double share) {
  double peak = 0.0;
  for (const auto& ops : t.ops) {
    double memory = 0.0;
    for (const ScheduledOp& op : ops) {
      memory += op.kind == OpKind::kForward    ? 1.0
                : op.kind == OpKind::kBackward ? -(1.0 - share)
                                               : -share;
      peak = std::max(peak, memory);
    }
  }
  return peak;
}

void check_options(int ranks, int microbatches, const ZbAutoOptions& options) {
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
  if (!(options.weight_memory_share >= 0.0 && options.weight_memory_share <= 1.0))
    throw PlanError(
        fmt::format("zb-auto: weight memory share M_W/M_B must be in [0, 1] (got {}), e.g. 1",
                    options.weight_memory_share));
  const double placements = 8.0 * 3.0 * ranks * static_cast<double>(microbatches);
  if (placements > kZbAutoMaxOpPlacements)
    throw PlanError(fmt::format(
        "zb-auto: p x m = {} x {} needs {:.0f} op placements, above the search bound of {:.0f} "
        "(seconds of search); use fewer microbatches or a fixed schedule such as zb-h2",
        ranks, microbatches, placements, kZbAutoMaxOpPlacements));
}

}  // namespace

Timetable make_zb_auto(int ranks, int microbatches, const ZbAutoOptions& options) {
  check_options(ranks, microbatches, options);
  const int limit = options.memory_limit == 0 ? 2 * ranks - 1 : options.memory_limit;
  Timetable best;
  Ranking best_ranking;
  const auto consider = [&](Timetable t, const Ranking& ranking) {
    if (ranking.better_than(best_ranking)) {
      best_ranking = ranking;
      best = std::move(t);
    }
  };
  Heuristic heuristic(ranks, microbatches, options, limit);
  for (const bool delay : {false, true})
    for (const bool skip : {false, true})
      for (const bool fill : {false, true}) {
        Ranking ranking;
        Timetable t = heuristic.run({delay, skip, fill}, ranking);
        consider(std::move(t), ranking);
      }
  // The handcrafted schedules that fit the limit join the candidates, as the paper compares
  // against them: at p microbatches of memory the heuristic can trail ZB-H1, which keeps its
  // W's for the tail.
  const UniformOpTimes times{options.forward_s, options.backward_s, options.weight_s,
                             options.transfer_s};
  for (Timetable t : {make_zb_h1(ranks, microbatches), make_zb_h2(ranks, microbatches)}) {
    if (peak_memory(t, options.weight_memory_share) > limit + kMemoryEpsilon) continue;
    const TimetableTiming timing = evaluate(t, times);
    t.kind = "zb-auto";
    consider(std::move(t), Ranking{timing.longest_span_s(), timing.makespan_s});
  }
  return best;
}

}  // namespace hetsim

// PipeDream (Narayanan et al., SOSP 2019) and PipeDream-2BW (Narayanan et al., ICML 2021).
//
// Both run 1F1B without a pipeline flush: in the steady state a rank alternates one forward
// and one backward forever, and weight updates happen between them. One iteration is
// represented as the 1F1B order over m microbatches (Megatron's warm-up of p-r-1 forwards,
// pairs, cool-down); in the real steady state the cool-down of one iteration overlaps the
// warm-up of the next, so the fill and drain this timetable shows are paid once per run, not
// per iteration, and its bubble is the one-time start-up cost, amortised as m grows.
// What differs is memory: PipeDream's weight stashing keeps one parameter version per
// microbatch in flight on the rank (p - r on rank r, the paper's "number of in-flight
// minibatches"), 2BW's double buffering keeps 2 on every rank (1 when p = 1: no microbatch is
// in flight across an update).
#include <algorithm>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

namespace {

Timetable one_iteration(const std::string& kind, int ranks, int microbatches) {
  require_at_least(kind, "pipeline ranks p", ranks, 1);
  require_at_least(kind, "microbatches m", microbatches, 1);
  Timetable t = make_1f1b(ranks, microbatches);
  t.kind = kind;
  return t;
}

}  // namespace

Timetable make_pipedream(int ranks, int microbatches) {
  Timetable t = one_iteration("pipedream", ranks, microbatches);
  for (int rank = 0; rank < ranks; ++rank)
    t.weight_versions.push_back(std::min(ranks - rank, microbatches));
  return t;
}

Timetable make_pipedream_2bw(int ranks, int microbatches) {
  Timetable t = one_iteration("pipedream-2bw", ranks, microbatches);
  t.weight_versions.assign(static_cast<std::size_t>(ranks), ranks > 1 ? 2 : 1);
  return t;
}

}  // namespace hetsim

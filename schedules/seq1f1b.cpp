// Seq1F1B (Sun et al., "Seq1F1B: Efficient Sequence-Level Pipeline Parallelism", NAACL 2025), in
// the order of the zero-bubble repository's seq1f1b scheduler (sail-sg/zero-bubble-pipeline-
// parallelism, scheduler/seq1f1b.py). Each microbatch is cut along the sequence into k
// segments; the timetable's microbatches are the m*k segments, segment j of microbatch i being
// index i*k + j. Rank r runs 1F1B over segments: w = min(p-r-1 + k-1, m*k) warm-up forwards in
// (microbatch, segment) order, then (forward, backward) pairs, then the remaining backwards;
// backwards take microbatches in order and, within one, segments last to first, because a
// segment's key/value gradients come from the later segments that attended to it.
//
// Cost assumption (for sim/): a segment costs 1/k of its microbatch's time and activations.
// Causal attention makes later segments costlier (segment j attends to (j+1)/k of the sequence),
// which this timetable does not encode; the paper balances that by cutting unequal lengths.
#include <algorithm>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

Timetable make_seq1f1b(int ranks, int microbatches, int splits) {
  require_at_least("seq1f1b", "pipeline ranks p", ranks, 1);
  require_at_least("seq1f1b", "microbatches m", microbatches, 1);
  require_at_least("seq1f1b", "sequence splits k", splits, 1);
  Timetable t = empty_timetable("seq1f1b", ranks, microbatches * splits, 1, false);
  t.sequence_splits = splits;
  const int total = microbatches * splits;
  // The i-th backward in order: microbatch i / k, segment k-1 - i % k.
  const auto backward_index = [&](int i) { return (i / splits) * splits + splits - 1 - i % splits; };
  for (int rank = 0; rank < ranks; ++rank) {
    auto& list = t.ops[rank];
    const int warmup = std::min(ranks - rank - 1 + splits - 1, total);
    for (int i = 0; i < warmup; ++i) list.push_back(forward(i));
    for (int i = 0; i + warmup < total; ++i) {
      list.push_back(forward(i + warmup));
      list.push_back(backward(backward_index(i)));
    }
    for (int i = total - warmup; i < total; ++i) list.push_back(backward(backward_index(i)));
  }
  return t;
}

}  // namespace hetsim

// V-Half and V-Min (Qi, Wan, Amar, Lin, "Pipeline Parallelism with Controllable Memory", 2024,
// Sec. 3-4), built the way the paper builds them and the zero-bubble repository's
// zbv_greedy.py does: a building block repeated every 6 slots, W's dropped into the free
// slots, then the warm-up and cool-down squeezed.
//
// Time is counted in slots of one chunk op (t_F = t_B = t_W). On the V placement (chunk 0 of
// rank r is stage r, chunk 1 is stage 2p-1-r) one microbatch's building block puts, on rank r,
// F chunk 0, F chunk 1, B chunk 1 and B chunk 0 at fixed offsets; microbatch i uses the same
// offsets plus 6i, and the two free slots of each period take W's. The offsets set the
// lifespan of a block and so the memory: peak activations = ceil(lifespan / period) blocks.
//   V-Half: 2r, 3p-2-r, 3p-1+d+2r, 6p-2+d-r with d = 3 for even p (else 0): chunk 0's forward
//           goes one slot slower down the ranks, the block lives about 3p slots, peak
//           (p+2)//2 microbatches of one stage ((p+2)//2 * 2 chunk activations).
//   V-Min:  r, 2p-1-r, 2p+d+r, 4p-1+d-r with d = 2 when 3 divides p: the tightest block, about
//           2p slots, peak (p+4)//3 microbatches of one stage.
// The gaps d keep the four ops of a rank on distinct slots modulo 6.
//
// Squeeze: in slot order over all ranks, an op of the warm-up (before rank 0's first B of
// chunk 0) or of the cool-down (after rank 0's last chunk-0 forward) moves to the earliest free
// slot after its dependencies if the rank's peak activations stay at the block's peak; the
// steady state is left as built. A rank's list is its ops in slot order, each W taking the
// oldest B without one.
#include <algorithm>
#include <array>
#include <tuple>

#include "schedules/generator_support.hpp"
#include "schedules/generators.hpp"

namespace hetsim {

namespace {

// Op types of the building block, in the order the block runs them on a rank.
enum BlockOp { kF0 = 0, kF1 = 1, kB1 = 2, kB0 = 3, kW = 4 };
constexpr int kPeriod = 6;  // slots per microbatch: 2 F, 2 B, 2 W

enum class VMemory { kHalf, kMin };

std::array<int, 4> block_offsets(VMemory memory, int ranks, int rank) {
  if (memory == VMemory::kHalf) {
    const int d = ranks % 2 == 0 ? 3 : 0;
    return {2 * rank, 3 * ranks - 2 - rank, 3 * ranks - 1 + d + 2 * rank, 6 * ranks - 2 + d - rank};
  }
  const int d = ranks % 3 == 0 ? 2 : 0;
  return {rank, 2 * ranks - 1 - rank, 2 * ranks + d + rank, 4 * ranks - 1 + d - rank};
}

struct RankSlots {
  std::vector<std::array<int, 4>> slot;  // [microbatch][F0, F1, B1, B0]
  std::vector<int> w_slot;               // [k] slot of the k-th W
  std::vector<char> used;                // [slot]
};

int peak_of(const RankSlots& s) {
  std::vector<int> delta(s.used.size() + 1, 0);
  for (const auto& mb : s.slot) {
    ++delta[mb[kF0]];
    ++delta[mb[kF1]];
  }
  for (const int w : s.w_slot) --delta[w];
  int alive = 0;
  int peak = 0;
  for (const int d : delta) peak = std::max(peak, alive += d);
  return peak;
}

// The k-th earliest B slot on a rank (W k may run only after it).
int kth_backward_slot(const RankSlots& s, int k) {
  std::vector<int> b;
  b.reserve(2 * s.slot.size());
  for (const auto& mb : s.slot) {
    b.push_back(mb[kB1]);
    b.push_back(mb[kB0]);
  }
  std::nth_element(b.begin(), b.begin() + k, b.end());
  return b[k];
}

Timetable make_v_shape(const std::string& kind, VMemory memory, int ranks, int microbatches) {
  require_at_least(kind, "pipeline ranks p", ranks, 1);
  require_at_least(kind, "microbatches m", microbatches, 1);
  Timetable t = empty_timetable(kind, ranks, microbatches, 2, true);
  t.stage_of = v_stage_map(ranks);
  const int m = microbatches;

  // The repeated blocks, then W's into the free slots, oldest B first.
  std::vector<RankSlots> slots(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto& s = slots[r];
    const auto offset = block_offsets(memory, ranks, r);
    s.slot.resize(static_cast<std::size_t>(m));
    const int last = offset[kB0] + kPeriod * (m - 1);
    s.used.assign(static_cast<std::size_t>(last + 2 * m + 2), 0);
    for (int mb = 0; mb < m; ++mb)
      for (int op = 0; op < 4; ++op) {
        s.slot[mb][op] = offset[op] + kPeriod * mb;
        s.used[s.slot[mb][op]] = 1;
      }
    std::vector<char> is_b(s.used.size(), 0);
    for (const auto& mb : s.slot) is_b[mb[kB1]] = is_b[mb[kB0]] = 1;
    int pending = 0;
    for (int x = 0;
         x < static_cast<int>(s.used.size()) && static_cast<int>(s.w_slot.size()) < 2 * m; ++x) {
      if (s.used[x]) {
        pending += is_b[x];
      } else if (pending > 0) {
        --pending;
        s.w_slot.push_back(x);
        s.used[x] = 1;
      }
    }
  }
  int cap = 0;
  for (const auto& s : slots) cap = std::max(cap, peak_of(s));

  // Squeeze the warm-up and the cool-down, visiting ops in slot order over all ranks.
  struct Visit {
    int slot, rank, op, index;  // index: microbatch, or k for the k-th W
  };
  std::vector<Visit> visits;
  for (int r = 0; r < ranks; ++r) {
    for (int mb = 0; mb < m; ++mb)
      for (int op = 0; op < 4; ++op) visits.push_back({slots[r].slot[mb][op], r, op, mb});
    for (int k = 0; k < 2 * m; ++k) visits.push_back({slots[r].w_slot[k], r, kW, k});
  }
  std::sort(visits.begin(), visits.end(), [](const Visit& a, const Visit& b) {
    return std::tie(a.slot, a.rank, a.op, a.index) < std::tie(b.slot, b.rank, b.op, b.index);
  });
  int phase = 0;  // 0 warm-up, 1 steady (kept), 2 cool-down
  for (const Visit& v : visits) {
    if (phase == 0 && v.rank == 0 && v.op == kB0) phase = 1;
    if (phase == 1) {
      if (v.op == kF0 && v.index == m - 1) phase = 2;
      continue;
    }
    auto& s = slots[v.rank];
    int ready = -1;  // latest slot of a dependency
    if (v.op == kW) {
      ready = kth_backward_slot(s, v.index);
      if (v.index > 0) ready = std::max(ready, s.w_slot[v.index - 1]);
    } else {
      const int mb = v.index;
      if ((v.op == kF0 || v.op == kB1) && v.rank > 0) ready = slots[v.rank - 1].slot[mb][v.op];
      if ((v.op == kF1 || v.op == kB0) && v.rank + 1 < ranks)
        ready = slots[v.rank + 1].slot[mb][v.op];
      if (v.op != kF0) ready = std::max(ready, s.slot[mb][v.op - 1]);
      if (mb > 0) ready = std::max(ready, s.slot[mb - 1][v.op]);
    }
    int& at = v.op == kW ? s.w_slot[v.index] : s.slot[v.index][v.op];
    const int from = at;
    for (int x = ready + 1; x < from; ++x) {
      if (s.used[x]) continue;
      at = x;
      if (peak_of(s) <= cap) {
        s.used[from] = 0;
        s.used[x] = 1;
        break;
      }
      at = from;
    }
  }

  // Each rank's ops in slot order; a W takes the oldest B without one.
  for (int r = 0; r < ranks; ++r) {
    const auto& s = slots[r];
    std::vector<std::pair<int, ScheduledOp>> timed;
    for (int mb = 0; mb < m; ++mb) {
      timed.push_back({s.slot[mb][kF0], forward(mb, 0)});
      timed.push_back({s.slot[mb][kF1], forward(mb, 1)});
      timed.push_back({s.slot[mb][kB1], backward(mb, 1)});
      timed.push_back({s.slot[mb][kB0], backward(mb, 0)});
    }
    for (const int w : s.w_slot) timed.push_back({w, weight(-1)});
    std::sort(timed.begin(), timed.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ScheduledOp> waiting;  // B's without their W, oldest first
    std::size_t oldest = 0;
    auto& list = t.ops[r];
    for (const auto& [slot, op] : timed) {
      if (op.kind == OpKind::kWeight) {
        list.push_back(weight(waiting[oldest].microbatch, waiting[oldest].chunk));
        ++oldest;
        continue;
      }
      if (op.kind == OpKind::kBackward) waiting.push_back(op);
      list.push_back(op);
    }
  }
  return t;
}

}  // namespace

Timetable make_v_half(int ranks, int microbatches) {
  return make_v_shape("v-half", VMemory::kHalf, ranks, microbatches);
}

Timetable make_v_min(int ranks, int microbatches) {
  return make_v_shape("v-min", VMemory::kMin, ranks, microbatches);
}

}  // namespace hetsim

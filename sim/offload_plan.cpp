#include "sim/offload_plan.hpp"

#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"

namespace hetsim {

OffloadPlan plan_offload(const Timetable& t, double fraction) {
  if (!(fraction >= 0 && fraction <= 1))
    throw PlanError(fmt::format("offload fraction {} is outside [0, 1]", fraction));
  OffloadPlan plan;
  if (fraction == 0) return plan;
  const int v = t.chunks_per_rank;
  plan.offloaded.assign(static_cast<std::size_t>(t.ranks),
                        std::vector<char>(static_cast<std::size_t>(t.microbatches) * v, 0));
  plan.reload_at.resize(static_cast<std::size_t>(t.ranks));
  const std::vector<std::vector<char>> pairs = pair_starts(t);
  for (int r = 0; r < t.ranks; ++r) {
    const auto& ops = t.ops[r];
    plan.reload_at[r].resize(ops.size());
    // Where each activation's B sits on this rank.
    std::vector<int> backward_at(static_cast<std::size_t>(t.microbatches) * v, -1);
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].kind == OpKind::kBackward)
        backward_at[static_cast<std::size_t>(ops[i].microbatch) * v + ops[i].chunk] = static_cast<int>(i);
    int forwards = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::kForward) continue;
      const bool chosen = std::floor((forwards + 1) * fraction) > std::floor(forwards * fraction);
      ++forwards;
      const std::size_t key = static_cast<std::size_t>(ops[i].microbatch) * v + ops[i].chunk;
      // The reload starts with the op before B; when B closes an overlapped pair (DualPipe), with
      // the op before that pair, which cannot start until B's input is back.
      int trigger = backward_at[key] - 1;
      if (trigger >= 0 && pairs[r][static_cast<std::size_t>(trigger)]) --trigger;
      if (!chosen || trigger <= static_cast<int>(i)) continue;
      plan.offloaded[r][key] = 1;
      plan.reload_at[r][static_cast<std::size_t>(trigger)].push_back(ops[i]);
    }
  }
  return plan;
}

}  // namespace hetsim

#pragma once
// Weights gathered before compute, during the replay. ZeRO-3 (FSDP) shards the weights: every
// forward and backward op (not W, whose weight gradient needs only activations and output
// gradients) all-gathers its chunk's bf16 weights over its rank's data-parallel rings, one layer
// (FSDP's wrapped unit) at a time, in the order the op runs them (backward: last layer first).
// Megatron's --overlap-param-gather moves the distributed optimizer's parameter all-gathers from
// after the optimizer step to before each chunk's first forward (of the next iteration; the
// replay is one steady iteration), one bucket at a time, the first layers' bucket first.
// Either way:
//   - the gathers run on a stream of their own (FSDP's all-gather stream; Megatron's separate
//     communicator), one unit at a time, one unit ahead of compute: a unit's gather starts once
//     the previous unit's gather is done and every replica has started computing on that
//     previous unit (FSDP's prefetch with its limit of two all-gathers in flight; Megatron's
//     forward pre-hook that dispatches the next bucket's all-gather);
//   - an op computes unit by unit, each for its share of the op's time, and stalls before a unit
//     whose weights have not arrived (the replay does that part, asking unit_arrived).
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/collective_launcher.hpp"
#include "sim/rank_sync.hpp"
#include "sim/replay_observer.hpp"

namespace hetsim {

class WeightGathers {
 public:
  // An op that computes on gathered weights: its chunk, and whether it runs the chunk's units
  // backwards (a backward op).
  struct GatheredOp {
    int chunk = 0;
    bool backward = false;
  };

  // `ops[rank]` lists the rank's gathered ops in its op order (the j-th is its "gathered op j");
  // `arrived(rank)` is called whenever one of the rank's units arrives. Starts the first gather
  // of every rank.
  WeightGathers(Engine& engine, CollectiveLauncher& launcher, const std::vector<RankSync>& ranks,
                std::vector<std::vector<GatheredOp>> ops, int replicas, ReplayObserver* observer,
                std::function<void(int)> arrived);

  // The units of the rank's gathered op j, u-th in its compute order.
  std::size_t units(int rank, std::size_t j) const;
  const GatherUnit& unit(int rank, std::size_t j, std::size_t u) const;
  bool unit_arrived(int rank, std::size_t j, std::size_t u) const {
    return state_[rank].first_unit[j] + u < state_[rank].units_arrived;
  }
  // One replica of `rank` started computing on unit u of its gathered op j.
  void unit_started(int rank, std::size_t j, std::size_t u);

  const std::vector<double>& busy_s() const { return busy_s_; }  // [rank] time a gather ran
  bool finished() const;

 private:
  struct RankState {
    // Units numbered across the rank in gather order: unit p is unit p - first_unit[j] of op j.
    std::vector<GatheredOp> ops;         // [j]
    std::vector<std::size_t> first_unit; // [j]
    std::vector<int> replicas_started;   // [p]
    std::size_t units_total = 0;
    std::size_t units_arrived = 0;       // units p < units_arrived are there
    std::size_t op = 0;                  // op j of the unit in flight (or next)
    bool running = false;
    std::size_t collective = 0;          // which of the unit's collectives is in flight
    double started_s = 0;
    std::uint32_t slot = 0;
  };
  void maybe_gather(int rank);
  void collective_done(int rank);

  Engine& engine_;
  CollectiveLauncher& launcher_;
  const std::vector<RankSync>& ranks_;
  int replicas_;
  ReplayObserver* observer_;
  std::function<void(int)> arrived_;
  std::vector<RankState> state_;
  std::vector<double> busy_s_;
};

}  // namespace hetsim

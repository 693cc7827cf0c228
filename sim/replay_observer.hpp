#pragma once
// What a replay reports as it happens. Exporters (traces, metrics curves) subscribe to these;
// the replay never calls an exporter directly. All times are seconds of simulated time.
#include <cstdint>

#include "schedules/timetable.hpp"
#include "sim/collectives/collective.hpp"

namespace hetsim {

// A compute op of a timetable on one pipeline worker (a tensor-parallel group in lockstep).
struct ComputeRecord {
  int worker = 0;
  int replica = 0;  // data-parallel replica
  int rank = 0;     // pipeline rank
  ScheduledOp op;
  int stage = 0;    // virtual stage
  double start_s = 0;
  double end_s = 0;
  double flops = 0;  // per GPU, recompute included
  // Activation bytes per GPU the op allocates (F) or frees (B, W): what it changes in memory.
  double activation_bytes = 0;
};

enum class TransferKind : std::uint8_t { kActivation, kGradient };

// A point-to-point transfer between pipeline workers: one flow per tensor-parallel GPU pair. Its
// bytes leave the sender from start_s to drained_s and arrive end_s - drained_s (the route's
// latency) later; transfers on one channel may overlap in flight, never while draining.
struct TransferRecord {
  std::uint64_t id = 0;  // 1-based, unique per replay
  int src_worker = 0;
  int dst_worker = 0;
  TransferKind kind = TransferKind::kActivation;
  int microbatch = 0;
  int dst_stage = 0;
  double start_s = 0;
  double drained_s = 0;  // the last byte left the sender (= end_s in abstract mode)
  double end_s = 0;      // the last byte arrived
  double bytes_per_gpu = 0;
};

// The data-parallel phases of a worker: its gradient buckets' reductions, the optimizer step,
// with the distributed optimizer the all-gathers of the updated parameters and, with ZeRO-3, the
// all-gathers of a chunk's weights before each forward and backward (on a stream of their own).
enum class PhaseKind : std::uint8_t { kGradientReduce, kOptimizer, kParameterGather, kWeightGather };
struct PhaseRecord {
  int worker = 0;
  PhaseKind kind = PhaseKind::kGradientReduce;
  double start_s = 0;
  double end_s = 0;
  double bytes_per_gpu = 0;                      // nccl-tests size of the collective
  CollectiveOp op = CollectiveOp::kAllReduce;    // collectives only
  bool expert_group = false;  // over the expert-data-parallel group (its own stream)
};

// An activation copied to host memory after its F (offload) or back before its B (reload), on
// the worker's host copy streams (PipeOffload).
struct CopyRecord {
  int worker = 0;
  bool offload = true;  // false: reload
  ScheduledOp op;       // the F whose activation moves (microbatch, chunk)
  double start_s = 0;
  double end_s = 0;
  double bytes_per_gpu = 0;
};

class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void on_compute(const ComputeRecord&) {}
  virtual void on_transfer(const TransferRecord&) {}
  virtual void on_phase(const PhaseRecord&) {}
  virtual void on_copy(const CopyRecord&) {}
  // Memory held by one GPU of `worker` changed: static (weights, gradients, optimizer state)
  // and activations. Called once per worker at time 0, then at every change.
  virtual void on_memory(int /*worker*/, double /*time_s*/, double /*static_bytes*/,
                         double /*activation_bytes*/) {}
};

}  // namespace hetsim

#pragma once
// Turns what a replay reports into a Chrome/Perfetto trace as it happens: one process per node,
// one thread per GPU stream (compute, gradient reduction, and one send or receive stream per peer
// and direction, so slices on a thread never overlap), a complete event per op with its
// microbatch, chunk, stage, bytes and FLOPs, a memory counter per GPU, and a flow arrow from each
// send to its receive. Timestamps are microseconds of simulated time from 0.
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "sim/placement.hpp"
#include "sim/replay_observer.hpp"
#include "topologies/cluster.hpp"
#include "traces/chrome_trace_writer.hpp"

namespace hetsim {

class ReplayTrace : public ReplayObserver {
 public:
  ReplayTrace(const std::string& path, const Cluster& cluster, const Placement& placement,
              int chunks_per_rank);
  void on_compute(const ComputeRecord& r) override;
  void on_transfer(const TransferRecord& r) override;
  void on_phase(const PhaseRecord& r) override;
  void on_memory(int worker, double time_s, double static_bytes, double activation_bytes) override;
  void on_copy(const CopyRecord& r) override;
  void commit() { writer_.commit(); }
  std::size_t events_written() const { return writer_.events_written(); }

 private:
  int pid(GpuId gpu) const { return cluster_.gpu(gpu).node + 1; }
  int compute_tid(GpuId gpu) const { return cluster_.gpu(gpu).local_index * 2 + 1; }
  int reduce_tid(GpuId gpu) const { return cluster_.gpu(gpu).local_index * 2 + 2; }
  // Streams named when first used: host copies (PipeOffload) and ZeRO-3 weight gathers.
  enum class Stream { kOffload, kReload, kWeightGather, kExpertCollectives };
  int stream_tid(GpuId gpu, Stream stream);
  // A stream for traffic between two GPUs in one direction, named when first used.
  int peer_tid(GpuId self, GpuId peer, bool sending, TransferKind kind);

  const Cluster& cluster_;
  Placement placement_;
  int chunks_per_rank_;
  ChromeTraceWriter writer_;
  std::map<std::tuple<GpuId, GpuId, bool, TransferKind>, int> peer_tids_;
  std::map<int, int> next_peer_tid_;  // per pid
  std::map<std::pair<GpuId, Stream>, int> stream_tids_;
  // Looked up per event, so built once: each worker's GPUs and each GPU's memory counter name.
  std::vector<std::vector<GpuId>> gpus_of_worker_;
  std::vector<std::string> memory_counter_name_;
  fmt::memory_buffer name_;  // the slice name being written, reused so slices do not allocate
};

}  // namespace hetsim

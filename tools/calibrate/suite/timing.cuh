#pragma once
// Timing with CUDA events: warm-ups, then repetitions until a time budget or a count is reached,
// each repetition preceded (outside the timed interval) by a write over a buffer twice the L2
// size so no operand is served from L2. Reports the median and the 10th/90th percentiles.
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "checks.cuh"

namespace hetsim::suite {

struct Timing {
  double median_s = 0, p10_s = 0, p90_s = 0;
  int reps = 0;
};

// Owns the L2-flush buffer and the events of one device.
class Timer {
 public:
  Timer(cudaStream_t stream, bool quick);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  // Times `op` (which enqueues work on the stream) as described above.
  Timing time(const std::function<void()>& op, bool flush_l2 = true);
  cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  cudaEvent_t start_{}, stop_{};
  int warmups_;
  int min_reps_, max_reps_;
  double budget_s_;  // per measurement
};

Timing summarize(std::vector<double> seconds);

}  // namespace hetsim::suite

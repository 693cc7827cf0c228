#include "timing.cuh"

namespace hetsim::suite {

Timing summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  const auto at = [&](double q) {
    return seconds[static_cast<size_t>(q * static_cast<double>(seconds.size() - 1) + 0.5)];
  };
  Timing t;
  t.reps = static_cast<int>(seconds.size());
  t.median_s = seconds.size() % 2 == 1 ? seconds[seconds.size() / 2]
                                       : 0.5 * (seconds[seconds.size() / 2 - 1] + seconds[seconds.size() / 2]);
  t.p10_s = at(0.1);
  t.p90_s = at(0.9);
  return t;
}

Timer::Timer(cudaStream_t stream, bool quick)
    : stream_(stream),
      warmups_(quick ? 2 : 5),
      min_reps_(quick ? 5 : 10),
      max_reps_(quick ? 30 : 100),
      budget_s_(quick ? 0.03 : 0.12) {
  int device = 0;
  int l2_bytes = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  flush_bytes_ = 2 * static_cast<size_t>(std::max(l2_bytes, 1 << 20));
  CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
}

Timer::~Timer() {
  // Destructors must not throw; errors here would only hide the one being reported.
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaFree(flush_);
}

Timing Timer::time(const std::function<void()>& op, bool flush_l2) {
  for (int i = 0; i < warmups_; ++i) op();
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<double> seconds;
  double spent = 0;
  while (static_cast<int>(seconds.size()) < max_reps_ &&
         (static_cast<int>(seconds.size()) < min_reps_ || spent < budget_s_)) {
    if (flush_l2) CUDA_CHECK(cudaMemsetAsync(flush_, static_cast<int>(seconds.size() & 0xff), flush_bytes_, stream_));
    CUDA_CHECK(cudaEventRecord(start_, stream_));
    op();
    CUDA_CHECK(cudaEventRecord(stop_, stream_));
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    seconds.push_back(ms * 1e-3);
    spent += ms * 1e-3;
  }
  return summarize(std::move(seconds));
}

}  // namespace hetsim::suite

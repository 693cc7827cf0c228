// Copies (host<->device pinned and pageable, device-to-device, peer), kernel launch overhead,
// and NCCL collectives across all local GPUs (one process, one communicator per GPU, as
// nccl-tests runs with -g). Collective times are host wall-clock averages over a batch of
// back-to-back operations, as nccl-tests reports them; the fit turns them into bus bandwidth
// (nccl-tests' PERFORMANCE.md factors).
#include <fmt/format.h>

#include <chrono>
#include <numeric>
#include <vector>

#include "lt_gemm.cuh"
#include "suite.hpp"
#include "timing.cuh"

namespace hetsim::suite {

namespace {

__global__ void empty_kernel() {}

void record(Recorder& recorder, calibration::OpKind kind, const std::string& op, double bytes, int ranks,
            const Timing& t) {
  calibration::Measurement m;
  m.kind = kind;
  m.op = op;
  m.label = op;
  m.bytes = bytes;
  m.ranks = ranks;
  m.seconds = t.median_s;
  recorder.add(std::move(m), {t.p10_s, t.p90_s, t.reps});
}

std::vector<size_t> sizes(size_t from, size_t to, size_t factor) {
  std::vector<size_t> out;
  for (size_t s = from; s <= to; s *= factor) out.push_back(s);
  return out;
}

}  // namespace

void bench_copies_and_launch(const Options& options, Recorder& recorder) {
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  Timer timer(stream, options.quick);
  const size_t max_bytes = options.quick ? size_t{256} << 20 : size_t{1} << 30;
  void *device = nullptr, *device2 = nullptr, *pinned = nullptr;
  CUDA_CHECK(cudaMalloc(&device, max_bytes));
  CUDA_CHECK(cudaMalloc(&device2, max_bytes));
  CUDA_CHECK(cudaMallocHost(&pinned, max_bytes));
  std::vector<unsigned char> pageable(max_bytes, 0x5a);
  fill_random(device, max_bytes / 4, CUDA_R_32F, 51, stream);
  void* peer = nullptr;
  int can_peer = 0;
  if (options.device_count >= 2) {
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can_peer, 0, 1));
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&peer, max_bytes));
    CUDA_CHECK(cudaSetDevice(0));
    if (can_peer) {
      const cudaError_t e = cudaDeviceEnablePeerAccess(1, 0);
      if (e != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(e);
    }
  }
  for (const size_t bytes : sizes(4096, max_bytes, options.quick ? 16 : 4)) {
    const auto time_copy = [&](const char* op, void* dst, const void* src, cudaMemcpyKind kind) {
      record(recorder, calibration::OpKind::kCopy, op, static_cast<double>(bytes), 1,
             timer.time([&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream)); }, false));
    };
    time_copy("h2d_pinned", device, pinned, cudaMemcpyHostToDevice);
    time_copy("d2h_pinned", pinned, device, cudaMemcpyDeviceToHost);
    time_copy("h2d_pageable", device, pageable.data(), cudaMemcpyHostToDevice);
    time_copy("d2h_pageable", pageable.data(), device, cudaMemcpyDeviceToHost);
    time_copy("d2d", device2, device, cudaMemcpyDeviceToDevice);
    if (peer) {
      record(recorder, calibration::OpKind::kCopy, can_peer ? "p2p" : "p2p_staged", static_cast<double>(bytes), 1,
             timer.time([&] { CUDA_CHECK(cudaMemcpyPeerAsync(peer, 1, device, 0, bytes, stream)); }, false));
    }
  }
  // Launch overhead: back-to-back empty kernels, time per launch.
  constexpr int kLaunches = 1000;
  const Timing launches = timer.time(
      [&] {
        for (int i = 0; i < kLaunches; ++i) empty_kernel<<<1, 1, 0, stream>>>();
        CUDA_CHECK(cudaGetLastError());
      },
      false);
  Timing per_launch = launches;
  per_launch.median_s /= kLaunches;
  per_launch.p10_s /= kLaunches;
  per_launch.p90_s /= kLaunches;
  record(recorder, calibration::OpKind::kLaunch, "launch", 0, 0, per_launch);

  if (peer) {
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaFree(peer));
    CUDA_CHECK(cudaSetDevice(0));
  }
  CUDA_CHECK(cudaFreeHost(pinned));
  CUDA_CHECK(cudaFree(device2));
  CUDA_CHECK(cudaFree(device));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

void bench_collectives(const Options& options, Recorder& recorder) {
  if (options.device_count < 2) {
    fmt::print("  collectives: one GPU only; skipped\n");
    return;
  }
  std::vector<int> rank_counts;
  for (int r = 2; r <= options.device_count; r *= 2) rank_counts.push_back(r);
  if (rank_counts.back() != options.device_count) rank_counts.push_back(options.device_count);
  const size_t max_bytes = options.quick ? size_t{256} << 20 : size_t{1} << 30;
  const int batch = options.quick ? 5 : 20;   // operations per timed batch
  const int batches = options.quick ? 3 : 7;  // timed batches; the median is kept

  for (const int n : rank_counts) {
    std::vector<int> devices(static_cast<size_t>(n));
    std::iota(devices.begin(), devices.end(), 0);
    std::vector<ncclComm_t> comms(static_cast<size_t>(n));
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    std::vector<cudaStream_t> streams(static_cast<size_t>(n));
    std::vector<void*> send(static_cast<size_t>(n)), recv(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaSetDevice(i));
      CUDA_CHECK(cudaStreamCreate(&streams[i]));
      CUDA_CHECK(cudaMalloc(&send[i], max_bytes));
      CUDA_CHECK(cudaMalloc(&recv[i], max_bytes));
      fill_random(send[i], max_bytes / 4, CUDA_R_32F, static_cast<uint32_t>(60 + i), streams[i]);
    }
    const auto sync_all = [&] {
      for (int i = 0; i < n; ++i) {
        CUDA_CHECK(cudaSetDevice(i));
        CUDA_CHECK(cudaStreamSynchronize(streams[i]));
      }
    };
    // `bytes` is nccl-tests' size: the whole buffer (all_gather: the gathered output).
    const auto enqueue = [&](const std::string& op, size_t bytes) {
      const size_t count = bytes / 4;  // fp32 elements
      const size_t per_rank = count / static_cast<size_t>(n);
      NCCL_CHECK(ncclGroupStart());
      for (int i = 0; i < n; ++i) {
        if (op == "all_reduce") {
          NCCL_CHECK(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
        } else if (op == "all_gather") {
          NCCL_CHECK(ncclAllGather(send[i], recv[i], per_rank, ncclFloat, comms[i], streams[i]));
        } else if (op == "reduce_scatter") {
          NCCL_CHECK(ncclReduceScatter(send[i], recv[i], per_rank, ncclFloat, ncclSum, comms[i], streams[i]));
        } else if (op == "all_to_all") {
          for (int peer = 0; peer < n; ++peer) {
            const size_t offset = static_cast<size_t>(peer) * per_rank * 4;
            NCCL_CHECK(ncclSend(static_cast<char*>(send[i]) + offset, per_rank, ncclFloat, peer, comms[i], streams[i]));
            NCCL_CHECK(ncclRecv(static_cast<char*>(recv[i]) + offset, per_rank, ncclFloat, peer, comms[i], streams[i]));
          }
        } else if (op == "send_recv" && i < 2) {
          // Rank 0 sends the whole buffer to rank 1.
          if (i == 0) NCCL_CHECK(ncclSend(send[0], count, ncclFloat, 1, comms[0], streams[0]));
          if (i == 1) NCCL_CHECK(ncclRecv(recv[1], count, ncclFloat, 0, comms[1], streams[1]));
        }
      }
      NCCL_CHECK(ncclGroupEnd());
    };
    std::vector<std::string> ops = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
    if (n == 2) ops.push_back("send_recv");
    for (const auto& op : ops) {
      for (const size_t bytes : sizes(size_t{4096} * static_cast<size_t>(n), max_bytes, options.quick ? 8 : 2)) {
        for (int i = 0; i < 2; ++i) enqueue(op, bytes);  // warm-up
        sync_all();
        std::vector<double> seconds;
        for (int b = 0; b < batches; ++b) {
          const auto start = std::chrono::steady_clock::now();
          for (int i = 0; i < batch; ++i) enqueue(op, bytes);
          sync_all();
          seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / batch);
        }
        record(recorder, calibration::OpKind::kCollective, op, static_cast<double>(bytes), n, summarize(seconds));
      }
    }
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaSetDevice(i));
      CUDA_CHECK(cudaFree(send[i]));
      CUDA_CHECK(cudaFree(recv[i]));
      CUDA_CHECK(cudaStreamDestroy(streams[i]));
      NCCL_CHECK(ncclCommDestroy(comms[i]));
    }
  }
  CUDA_CHECK(cudaSetDevice(0));
}

}  // namespace hetsim::suite

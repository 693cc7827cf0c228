// Memory-bound kernels of a transformer step, written plainly (one pass over the data, fp32
// math, bf16 storage, as the framework kernels do), timed across sizes. Bytes moved count one
// read of each input and one write of each output:
//   rmsnorm, layernorm, softmax: 2 * rows * cols * 2      silu, gelu: 2 * n * 2
//   add (residual): 3 * n * 2                             adam (fp32 p, g, m, v -> p, m, v): 7 * n * 4
#include <cuda_bf16.h>

#include <functional>
#include <vector>

#include "lt_gemm.cuh"
#include "suite.hpp"
#include "timing.cuh"

namespace hetsim::suite {

namespace {

constexpr int kThreads = 256;

__device__ float block_sum(float v) {
  __shared__ float scratch[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0;
  for (int i = 0; i < kThreads / 32; ++i) total += scratch[i];
  __syncthreads();
  return total;
}

__global__ void rmsnorm(const __nv_bfloat16* x, __nv_bfloat16* y, int cols) {
  const size_t row = blockIdx.x;
  float sq = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = __bfloat162float(x[row * cols + j]);
    sq += v * v;
  }
  const float inv = rsqrtf(block_sum(sq) / cols + 1e-6f);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) y[row * cols + j] = __float2bfloat16(__bfloat162float(x[row * cols + j]) * inv);
}

__global__ void layernorm(const __nv_bfloat16* x, __nv_bfloat16* y, int cols) {
  const size_t row = blockIdx.x;
  float s = 0, sq = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = __bfloat162float(x[row * cols + j]);
    s += v;
    sq += v * v;
  }
  const float mean = block_sum(s) / cols;
  const float inv = rsqrtf(block_sum(sq) / cols - mean * mean + 1e-5f);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    y[row * cols + j] = __float2bfloat16((__bfloat162float(x[row * cols + j]) - mean) * inv);
  }
}

__global__ void softmax_rows(const __nv_bfloat16* x, __nv_bfloat16* y, int cols) {
  const size_t row = blockIdx.x;
  // Inputs are in [-1, 1]: exp cannot overflow, so the max pass is folded into one sum pass.
  float s = 0;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(__bfloat162float(x[row * cols + j]));
  const float inv = 1.0f / block_sum(s);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) y[row * cols + j] = __float2bfloat16(__expf(__bfloat162float(x[row * cols + j])) * inv);
}

__global__ void silu(const __nv_bfloat16* x, __nv_bfloat16* y, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = __bfloat162float(x[i]);
    y[i] = __float2bfloat16(v / (1.0f + __expf(-v)));
  }
}

__global__ void gelu(const __nv_bfloat16* x, __nv_bfloat16* y, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = __bfloat162float(x[i]);
    y[i] = __float2bfloat16(0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))));
  }
}

__global__ void add(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* y, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    y[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
  }
}

// Adam (Kingma & Ba 2015) with the usual defaults, bias correction folded into the step size.
__global__ void adam(float* p, const float* g, float* m, float* v, size_t n, float step) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float gi = g[i];
    const float mi = 0.9f * m[i] + 0.1f * gi;
    const float vi = 0.999f * v[i] + 0.001f * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] -= step * mi / (sqrtf(vi) + 1e-8f);
  }
}

}  // namespace

void bench_memory_bound(const Options& options, Recorder& recorder) {
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  Timer timer(stream, options.quick);
  int sms = 0, device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const unsigned grid = static_cast<unsigned>(sms * 8);
  constexpr int kCols = 4096;  // a hidden size; rows = tokens
  std::vector<int64_t> rows;
  for (int64_t r = 64; r <= (options.quick ? 65536 : 262144); r *= (options.quick ? 4 : 2)) rows.push_back(r);

  for (const int64_t r : rows) {
    const size_t n = static_cast<size_t>(r) * kCols;
    void *a = nullptr, *b = nullptr, *y = nullptr;
    CUDA_CHECK(cudaMalloc(&a, n * 2));
    CUDA_CHECK(cudaMalloc(&b, n * 2));
    CUDA_CHECK(cudaMalloc(&y, n * 2));
    fill_random(a, n, CUDA_R_16BF, 31, stream);
    fill_random(b, n, CUDA_R_16BF, 32, stream);
    const auto A = static_cast<const __nv_bfloat16*>(a), B = static_cast<const __nv_bfloat16*>(b);
    const auto Y = static_cast<__nv_bfloat16*>(y);
    const unsigned row_blocks = static_cast<unsigned>(r);
    struct Case {
      const char* op;
      double bytes;
      std::function<void()> run;
    };
    const std::vector<Case> cases = {
        {"rmsnorm", 4.0 * n, [&] { rmsnorm<<<row_blocks, kThreads, 0, stream>>>(A, Y, kCols); }},
        {"layernorm", 4.0 * n, [&] { layernorm<<<row_blocks, kThreads, 0, stream>>>(A, Y, kCols); }},
        {"softmax", 4.0 * n, [&] { softmax_rows<<<row_blocks, kThreads, 0, stream>>>(A, Y, kCols); }},
        {"silu", 4.0 * n, [&] { silu<<<grid, kThreads, 0, stream>>>(A, Y, n); }},
        {"gelu", 4.0 * n, [&] { gelu<<<grid, kThreads, 0, stream>>>(A, Y, n); }},
        {"add", 6.0 * n, [&] { add<<<grid, kThreads, 0, stream>>>(A, B, Y, n); }},
    };
    for (const Case& c : cases) {
      const Timing t = timer.time([&] {
        c.run();
        CUDA_CHECK(cudaGetLastError());
      });
      calibration::Measurement m;
      m.kind = calibration::OpKind::kMemoryBound;
      m.op = c.op;
      m.label = c.op;
      m.bytes = c.bytes;
      m.seconds = t.median_s;
      recorder.add(std::move(m), {t.p10_s, t.p90_s, t.reps});
    }
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(y));
  }
  // Adam over fp32 parameter counts from 1 M to 1 G (quick: to 256 M).
  for (size_t n = size_t{1} << 20; n <= (options.quick ? size_t{1} << 28 : size_t{1} << 30); n *= 4) {
    std::vector<float*> buffers(4);
    for (size_t i = 0; i < buffers.size(); ++i) {
      CUDA_CHECK(cudaMalloc(&buffers[i], n * sizeof(float)));
      fill_random(buffers[i], n, CUDA_R_32F, static_cast<uint32_t>(40 + i), stream);
    }
    // v (second moment) starts at 0, Adam's own initial state, and stays >= 0.
    CUDA_CHECK(cudaMemsetAsync(buffers[3], 0, n * sizeof(float), stream));
    const Timing t = timer.time([&] {
      adam<<<grid, kThreads, 0, stream>>>(buffers[0], buffers[1], buffers[2], buffers[3], n, 1e-4f);
      CUDA_CHECK(cudaGetLastError());
    });
    for (float* f : buffers) CUDA_CHECK(cudaFree(f));
    calibration::Measurement m;
    m.kind = calibration::OpKind::kMemoryBound;
    m.op = "adam";
    m.label = "adam";
    m.bytes = 7.0 * 4.0 * static_cast<double>(n);
    m.seconds = t.median_s;
    recorder.add(std::move(m), {t.p10_s, t.p90_s, t.reps});
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace hetsim::suite

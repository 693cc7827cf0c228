// Attention as the unfused path runs it (cuDNN's fused SDPA needs the cudnn_frontend header
// library, which this build does not have): per (batch x head), with Q, K, V, O row-major
// [seq x head_dim] and bf16 operands, fp32 accumulation:
//   forward:  S = Q K^T; P = softmax(S / sqrt(d), causal mask); O = P V
//   backward: dV = P^T dO; dP = dO V^T; dS = P * (dP - rowsum(dP * P)); dQ = dS K; dK = dS^T Q
// The GEMMs are cuBLASLt strided-batched matmuls; the profile labels its attention "unfused".
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "lt_gemm.cuh"
#include "suite.hpp"
#include "timing.cuh"

namespace hetsim::suite {

namespace {

constexpr int kThreads = 256;

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float scratch[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = is_max ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? scratch[lane] : (is_max ? -INFINITY : 0.0f);
    for (int offset = 16; offset > 0; offset /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, v, offset);
      v = is_max ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) scratch[0] = v;
  }
  __syncthreads();
  const float result = scratch[0];
  __syncthreads();
  return result;
}

// One block per row of S (row q of one batch-head); columns k > q are masked when causal.
__global__ void softmax_forward(const __nv_bfloat16* s, __nv_bfloat16* p, int seq, float scale, bool causal) {
  const size_t row = blockIdx.x;
  const int q = static_cast<int>(row % seq);
  const int limit = causal ? q + 1 : seq;
  const __nv_bfloat16* in = s + row * seq;
  __nv_bfloat16* out = p + row * seq;
  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < limit; j += blockDim.x) local_max = fmaxf(local_max, __bfloat162float(in[j]) * scale);
  const float row_max = block_reduce(local_max, true);
  float local_sum = 0;
  for (int j = threadIdx.x; j < limit; j += blockDim.x) local_sum += __expf(__bfloat162float(in[j]) * scale - row_max);
  const float inv_sum = 1.0f / block_reduce(local_sum, false);
  for (int j = threadIdx.x; j < seq; j += blockDim.x) {
    const float v = j < limit ? __expf(__bfloat162float(in[j]) * scale - row_max) * inv_sum : 0.0f;
    out[j] = __float2bfloat16(v);
  }
}

// dS = P * (dP - sum_j dP_j P_j) * scale, one block per row.
__global__ void softmax_backward(const __nv_bfloat16* p, const __nv_bfloat16* dp, __nv_bfloat16* ds, int seq,
                                 float scale) {
  const size_t row = blockIdx.x;
  const __nv_bfloat16* pr = p + row * seq;
  const __nv_bfloat16* dpr = dp + row * seq;
  float local = 0;
  for (int j = threadIdx.x; j < seq; j += blockDim.x) local += __bfloat162float(pr[j]) * __bfloat162float(dpr[j]);
  const float dot = block_reduce(local, false);
  for (int j = threadIdx.x; j < seq; j += blockDim.x) {
    ds[row * seq + j] = __float2bfloat16(__bfloat162float(pr[j]) * (__bfloat162float(dpr[j]) - dot) * scale);
  }
}

}  // namespace

void bench_attention(const Options& options, Recorder& recorder) {
  const LtContext lt;
  const cudaStream_t stream = lt.stream;
  Timer timer(stream, options.quick);
  const LtTypes types = lt_types("bf16");

  const std::vector<int64_t> seqs = options.quick ? std::vector<int64_t>{1024, 4096}
                                                  : std::vector<int64_t>{512, 1024, 2048, 4096, 8192};
  const std::vector<int64_t> head_dims = options.quick ? std::vector<int64_t>{128} : std::vector<int64_t>{64, 128};
  const std::vector<int64_t> head_counts = options.quick ? std::vector<int64_t>{16} : std::vector<int64_t>{8, 32};
  constexpr int64_t kBatch = 1;
  for (const int64_t seq : seqs) {
    for (const int64_t d : head_dims) {
      for (const int64_t heads : head_counts) {
        const int batch = static_cast<int>(kBatch * heads);
        const size_t qkv = static_cast<size_t>(batch * seq * d), scores = static_cast<size_t>(batch) * seq * seq;
        std::vector<void*> buffers;
        auto alloc = [&](size_t elements, uint32_t seed) {
          void* p = nullptr;
          CUDA_CHECK(cudaMalloc(&p, elements * 2));
          fill_random(p, elements, CUDA_R_16BF, seed, stream);
          buffers.push_back(p);
          return p;
        };
        void *q = alloc(qkv, 11), *k = alloc(qkv, 12), *v = alloc(qkv, 13), *o = alloc(qkv, 14), *d_o = alloc(qkv, 15);
        void *dq = alloc(qkv, 16), *dk = alloc(qkv, 17), *dv = alloc(qkv, 18);
        void *s = alloc(scores, 19), *p = alloc(scores, 20), *dp = alloc(scores, 21), *ds = alloc(scores, 22);
        // Column-major views (see the derivation in README.md): X row-major [seq x d] is Xc (d x seq).
        LtGemm qk, pv, dv_gemm, dp_gemm, dq_gemm, dk_gemm;
        bool ok = qk.setup(lt, types, CUBLAS_OP_T, CUBLAS_OP_N, seq, seq, d, batch);
        ok = ok && pv.setup(lt, types, CUBLAS_OP_N, CUBLAS_OP_N, d, seq, seq, batch);
        ok = ok && dv_gemm.setup(lt, types, CUBLAS_OP_N, CUBLAS_OP_T, d, seq, seq, batch);
        ok = ok && dp_gemm.setup(lt, types, CUBLAS_OP_T, CUBLAS_OP_N, seq, seq, d, batch);
        ok = ok && dq_gemm.setup(lt, types, CUBLAS_OP_N, CUBLAS_OP_N, d, seq, seq, batch);
        ok = ok && dk_gemm.setup(lt, types, CUBLAS_OP_N, CUBLAS_OP_T, d, seq, seq, batch);
        if (ok) {
          const float scale = 1.0f / std::sqrt(static_cast<float>(d));
          const auto bf = [](void* x) { return static_cast<__nv_bfloat16*>(x); };
          const unsigned rows = static_cast<unsigned>(batch * seq);
          const Timing forward = timer.time([&] {
            qk.run(k, q, s, stream);  // S^T (col-major) = Kc^T Qc
            softmax_forward<<<rows, kThreads, 0, stream>>>(bf(s), bf(p), static_cast<int>(seq), scale, true);
            CUDA_CHECK(cudaGetLastError());
            pv.run(v, p, o, stream);  // O^T = Vc Pc
          });
          const Timing backward = timer.time([&] {
            dv_gemm.run(d_o, p, dv, stream);  // dV^T = dOc Pc^T
            dp_gemm.run(v, d_o, dp, stream);  // dP^T = Vc^T dOc
            softmax_backward<<<rows, kThreads, 0, stream>>>(bf(p), bf(dp), bf(ds), static_cast<int>(seq), scale);
            CUDA_CHECK(cudaGetLastError());
            dq_gemm.run(k, ds, dq, stream);  // dQ^T = Kc dSc
            dk_gemm.run(q, ds, dk, stream);  // dK^T = Qc dSc^T
          });
          for (const auto& [pass, timing] : {std::pair{"fwd", forward}, std::pair{"bwd", backward}}) {
            calibration::Measurement m;
            m.kind = calibration::OpKind::kAttention;
            m.op = pass;
            m.label = pass;
            m.dtype = "bf16";
            m.batch = static_cast<double>(kBatch);
            m.heads = static_cast<double>(heads);
            m.seq = static_cast<double>(seq);
            m.head_dim = static_cast<double>(d);
            m.causal = true;
            m.seconds = timing.median_s;
            recorder.add(std::move(m), {timing.p10_s, timing.p90_s, timing.reps});
          }
        } else {
          fmt::print("  attention s={} d={} h={}: no cuBLASLt algorithm; skipped\n", seq, d, heads);
        }
        for (void* b : buffers) CUDA_CHECK(cudaFree(b));
      }
    }
  }
}

}  // namespace hetsim::suite

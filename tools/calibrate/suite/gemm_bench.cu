// GEMMs of a transformer layer through cuBLASLt. Shapes follow Megatron-LM's sharding: for hidden
// h, FFN f, heads a and KV heads g (head_dim h/a), tokens t and TP degree p:
//   QKV        m=t, n=(a+2g)(h/a)/p, k=h     (column-parallel)
//   attn out   m=t, n=h,             k=h/p   (row-parallel)
//   gate+up    m=t, n=2f/p,          k=h
//   down       m=t, n=h,             k=f/p
//   LM head    m=t, n=V/p,           k=h
// each forward (m, n, k) and its two backward GEMMs: data gradient (m, k, n) and weight gradient
// (n, k, m). Memory layout: PyTorch's y = x W^T, i.e. cuBLAS "TN" (W stored k-major).
#include <fmt/format.h>

#include <vector>

#include "lt_gemm.cuh"
#include "suite.hpp"
#include "timing.cuh"

namespace hetsim::suite {

namespace {

struct ModelShape {
  const char* name;
  int64_t hidden, ffn, heads, kv_heads, vocab;
};
// From the models' HuggingFace config.json files (hidden_size, intermediate_size,
// num_attention_heads, num_key_value_heads, vocab_size).
constexpr ModelShape kModels[] = {
    {"llama-3.2-1b", 2048, 8192, 32, 8, 128256},
    {"llama-3-8b", 4096, 14336, 32, 8, 128256},
    {"llama-3-70b", 8192, 28672, 64, 8, 128256},
};

struct Gemm {
  const char* op;
  int64_t m, n, k;
};

std::vector<Gemm> layer_gemms(const ModelShape& s, int64_t tokens, int64_t tp) {
  const int64_t head_dim = s.hidden / s.heads;
  const Gemm forward[] = {
      {"qkv", tokens, (s.heads + 2 * s.kv_heads) * head_dim / tp, s.hidden},
      {"attn_out", tokens, s.hidden, s.hidden / tp},
      {"gate_up", tokens, 2 * s.ffn / tp, s.hidden},
      {"down", tokens, s.hidden, s.ffn / tp},
      {"lm_head", tokens, s.vocab / tp, s.hidden},
  };
  std::vector<Gemm> out;
  for (const Gemm& g : forward) {
    out.push_back(g);
    out.push_back({g.op, g.m, g.k, g.n});  // dX = dY W
    out.push_back({g.op, g.n, g.k, g.m});  // dW = dY^T X
  }
  return out;
}

}  // namespace

void bench_gemm(const Options& options, Recorder& recorder) {
  const LtContext lt;
  const cudaStream_t stream = lt.stream;
  Timer timer(stream, options.quick);

  std::vector<const char*> dtypes = {"bf16", "fp16", "tf32"};
  if (options.compute_capability >= 89) dtypes.push_back("fp8");  // Ada and Hopper have FP8 tensor cores
  const std::vector<int64_t> tokens = options.quick ? std::vector<int64_t>{2048, 8192}
                                                    : std::vector<int64_t>{512, 1024, 2048, 4096, 8192, 16384};
  const std::vector<int64_t> tps = options.quick ? std::vector<int64_t>{1, 8} : std::vector<int64_t>{1, 2, 4, 8};
  const size_t model_count = options.quick ? 2 : std::size(kModels);

  for (const char* dtype : dtypes) {
    const LtTypes types = lt_types(dtype);
    for (size_t mi = 0; mi < model_count; ++mi) {
      for (const int64_t t : tokens) {
        for (const int64_t tp : tps) {
          for (const Gemm& g : layer_gemms(kModels[mi], t, tp)) {
            LtGemm gemm;
            if (!gemm.setup(lt, types, CUBLAS_OP_T, CUBLAS_OP_N, g.n, g.m, g.k, 1)) {
              fmt::print("  gemm {} {}x{}x{}: no cuBLASLt algorithm; skipped\n", dtype, g.m, g.n, g.k);
              continue;
            }
            // Column-major view of y[m,n] = x[m,k] W^T: D (n x m) = W (stored k x n, transposed) * x (k x m).
            void *w = nullptr, *x = nullptr, *y = nullptr;
            const size_t in_size = element_size(types.ab), out_size = element_size(types.cd);
            CUDA_CHECK(cudaMalloc(&w, static_cast<size_t>(g.n * g.k) * in_size));
            CUDA_CHECK(cudaMalloc(&x, static_cast<size_t>(g.m * g.k) * in_size));
            CUDA_CHECK(cudaMalloc(&y, static_cast<size_t>(g.m * g.n) * out_size));
            fill_random(w, static_cast<size_t>(g.n * g.k), types.ab, 1, stream);
            fill_random(x, static_cast<size_t>(g.m * g.k), types.ab, 2, stream);
            const Timing timing = timer.time([&] { gemm.run(w, x, y, stream); });
            CUDA_CHECK(cudaFree(w));
            CUDA_CHECK(cudaFree(x));
            CUDA_CHECK(cudaFree(y));
            calibration::Measurement m;
            m.kind = calibration::OpKind::kGemm;
            m.op = g.op;
            m.label = g.op;
            m.dtype = dtype;
            m.m = static_cast<double>(g.m);
            m.n = static_cast<double>(g.n);
            m.k = static_cast<double>(g.k);
            m.seconds = timing.median_s;
            recorder.add(std::move(m), {timing.p10_s, timing.p90_s, timing.reps});
          }
        }
      }
    }
  }
}

}  // namespace hetsim::suite

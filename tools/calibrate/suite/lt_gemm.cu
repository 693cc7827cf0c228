#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstring>
#include <stdexcept>

#include "lt_gemm.cuh"

namespace hetsim::suite {

LtTypes lt_types(const char* dtype) {
  if (std::strcmp(dtype, "bf16") == 0) return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  if (std::strcmp(dtype, "fp16") == 0) return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
  if (std::strcmp(dtype, "tf32") == 0) return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
  if (std::strcmp(dtype, "fp8") == 0) return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  throw std::invalid_argument(std::string("no cuBLASLt types for dtype ") + dtype);
}

size_t element_size(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8F_E4M3: return 1;
    case CUDA_R_16BF:
    case CUDA_R_16F: return 2;
    default: return 4;
  }
}

bool LtGemm::setup(const LtContext& context, const LtTypes& types, cublasOperation_t trans_a,
                   cublasOperation_t trans_b, int64_t m, int64_t n, int64_t k, int batch) {
  handle_ = context.handle;
  workspace_ = context.workspace;
  workspace_bytes_ = LtContext::kWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, types.compute, CUDA_R_32F));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof(trans_a)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof(trans_b)));
  // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k when transposed).
  const int64_t a_rows = trans_a == CUBLAS_OP_N ? m : k, a_cols = trans_a == CUBLAS_OP_N ? k : m;
  const int64_t b_rows = trans_b == CUBLAS_OP_N ? k : n, b_cols = trans_b == CUBLAS_OP_N ? n : k;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, types.ab, a_rows, a_cols, a_rows));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, types.ab, b_rows, b_cols, b_rows));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_, types.cd, m, n, m));
  if (batch > 1) {
    const int32_t count = batch;
    const int64_t stride_a = a_rows * a_cols, stride_b = b_rows * b_cols, stride_d = m * n;
    for (auto [layout, stride] : {std::pair{a_, stride_a}, std::pair{b_, stride_b}, std::pair{d_, stride_d}}) {
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                    sizeof(stride)));
    }
  }
  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes_, sizeof(workspace_bytes_)));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, preference, 1, &result, &returned);
  CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(preference));
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || returned == 0) return false;
  CUBLAS_CHECK(status);
  algo_ = result.algo;
  return true;
}

LtContext::LtContext() {
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUBLAS_CHECK(cublasLtCreate(&handle));
  CUDA_CHECK(cudaMalloc(&workspace, kWorkspaceBytes));
}

LtContext::~LtContext() {
  if (workspace) cudaFree(workspace);
  if (handle) cublasLtDestroy(handle);
  if (stream) cudaStreamDestroy(stream);
}

LtGemm::~LtGemm() {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void LtGemm::run(const void* a, const void* b, void* d, cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algo_, workspace_,
                              workspace_bytes_, stream));
}

namespace {

__device__ float hashed_unit(size_t i, uint32_t seed) {
  // A 32-bit integer hash (splitmix-style mixing) mapped to [-1, 1), never exactly 0.
  uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  const float u = static_cast<float>(x >> 40) / static_cast<float>(1ull << 24);  // [0, 1)
  const float v = 2.0f * u - 1.0f;
  return v == 0.0f ? 0.5f : v;
}

template <typename T>
__global__ void fill_kernel(T* data, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    data[i] = static_cast<T>(hashed_unit(i, seed));
  }
}

}  // namespace

void fill_random(void* data, size_t count, cudaDataType_t t, uint32_t seed, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr int kBlocks = 1024;
  switch (t) {
    case CUDA_R_16BF: fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed); break;
    case CUDA_R_16F: fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<__half*>(data), count, seed); break;
    case CUDA_R_8F_E4M3: fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed); break;
    default: fill_kernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<float*>(data), count, seed); break;
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace hetsim::suite

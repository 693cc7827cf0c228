#pragma once
// One cuBLASLt matmul, set up once (descriptors, layouts, the heuristic's first algorithm, as
// PyTorch picks it) and run many times. Column-major, as cuBLAS sees memory:
//   D[m x n] = op(A) [m x k] * op(B) [k x n], batched with strides when batch > 1.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "checks.cuh"

namespace hetsim::suite {

struct LtTypes {
  cudaDataType_t ab;      // operand type
  cudaDataType_t cd;      // output type
  cublasComputeType_t compute;
};
// bf16 / fp16 operands and outputs with fp32 accumulation; tf32: fp32 data, TF32 tensor cores;
// fp8: e4m3 operands, bf16 output (the TN layout is the one cuBLASLt supports for fp8).
LtTypes lt_types(const char* dtype);
size_t element_size(cudaDataType_t t);

// What the GEMMs of one benchmark share: a stream, a cuBLASLt handle and the matmul workspace
// (32 MiB, what PyTorch gives cuBLASLt on Hopper). Released in reverse order, like LtGemm's
// descriptors, without throwing from the destructor.
class LtContext {
 public:
  static constexpr size_t kWorkspaceBytes = 32u << 20;
  LtContext();
  ~LtContext();
  LtContext(const LtContext&) = delete;
  LtContext& operator=(const LtContext&) = delete;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
};

class LtGemm {
 public:
  // Returns false (and leaves the object unusable) when the heuristic offers no algorithm.
  bool setup(const LtContext& context, const LtTypes& types, cublasOperation_t trans_a,
             cublasOperation_t trans_b, int64_t m, int64_t n, int64_t k, int batch);
  ~LtGemm();
  LtGemm() = default;
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  void run(const void* a, const void* b, void* d, cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

// Fills `count` elements of type `t` with deterministic pseudo-random values in [-1, 1]
// (a hash of the index and seed: no zeros, no denormals, the same on every run).
void fill_random(void* data, size_t count, cudaDataType_t t, uint32_t seed, cudaStream_t stream);

}  // namespace hetsim::suite

#pragma once
// Every CUDA, cuBLAS(Lt) and NCCL call goes through one of these: a failure throws with the call,
// the library's own error text, and the source line, so a failed measurement never looks like a
// fast one.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace hetsim::suite {

[[noreturn]] inline void fail_call(const char* library, const char* call, const std::string& why,
                                   const char* file, int line) {
  throw std::runtime_error(std::string(library) + " call failed: " + call + ": " + why + " (" + file + ":" +
                           std::to_string(line) + ")");
}

}  // namespace hetsim::suite

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    const cudaError_t status_ = (call);                                                        \
    if (status_ != cudaSuccess)                                                                \
      ::hetsim::suite::fail_call("CUDA", #call, cudaGetErrorString(status_), __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                         \
  do {                                                                                             \
    const cublasStatus_t status_ = (call);                                                         \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                                          \
      ::hetsim::suite::fail_call("cuBLAS", #call, cublasGetStatusString(status_), __FILE__, __LINE__); \
  } while (0)

#define NCCL_CHECK(call)                                                                      \
  do {                                                                                        \
    const ncclResult_t status_ = (call);                                                      \
    if (status_ != ncclSuccess)                                                               \
      ::hetsim::suite::fail_call("NCCL", #call, ncclGetErrorString(status_), __FILE__, __LINE__); \
  } while (0)

#pragma once
// The parts of hetsim-calibrate-suite: each measures one op class on device 0 (collectives and
// peer copies across all local devices) and adds to the Recorder.
#include "recorder.hpp"

namespace hetsim::suite {

struct Options {
  bool quick = false;
  int device_count = 1;
  int compute_capability = 0;  // major * 10 + minor
};

void bench_gemm(const Options& options, Recorder& recorder);
// Unfused attention: cuBLASLt strided-batched GEMMs plus a softmax kernel (see README.md).
void bench_attention(const Options& options, Recorder& recorder);
void bench_memory_bound(const Options& options, Recorder& recorder);
void bench_copies_and_launch(const Options& options, Recorder& recorder);
void bench_collectives(const Options& options, Recorder& recorder);

}  // namespace hetsim::suite

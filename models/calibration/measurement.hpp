#pragma once
// One timed operation, whatever profiler produced it: the unit every importer yields and every
// fit consumes. Fields that do not apply to a kind stay 0.
#include <string>
#include <utility>
#include <vector>

namespace hetsim::calibration {

// The op classes a profile knows. Each names the shape fields it uses.
//   gemm:         m, n, k, dtype (C[m,n] = A[m,k] * B[k,n])
//   attention:    op "fwd"/"bwd", batch, heads, seq, head_dim, causal, dtype
//   memory_bound: op (rmsnorm, layernorm, softmax, silu, gelu, add, adam, ...), bytes moved
//   copy:         op (h2d_pinned, d2h_pageable, d2d, p2p, ...), bytes
//   collective:   op (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv), bytes
//                 (nccl-tests "size": the whole buffer), ranks
//   launch:       op "launch", an empty kernel's launch-to-completion time
enum class OpKind { kGemm, kAttention, kMemoryBound, kCopy, kCollective, kLaunch };
const char* to_string(OpKind kind);
// False (and `out` untouched) for an unknown name.
bool parse_op_kind(const std::string& text, OpKind& out);

struct Measurement {
  OpKind kind = OpKind::kGemm;
  std::string op;     // key inside the kind
  std::string label;  // the profiler's own name for it (e.g. vidur's "mlp_up_proj")
  std::string dtype;  // "bf16", "fp16", "fp8", "tf32", "fp32"; "" where it does not apply
  double m = 0, n = 0, k = 0;
  double batch = 0, heads = 0, seq = 0, head_dim = 0;
  bool causal = false;
  double bytes = 0;
  int ranks = 0;
  double seconds = 0;  // the profiler's median
  std::vector<std::pair<std::string, double>> tags;  // grouping columns (e.g. num_tokens, tp)
  std::string source;  // "file:line"

  // The value of a tag; NaN when absent.
  double tag(const std::string& name) const;
};

}  // namespace hetsim::calibration

// zb-auto without --memory-limit keeps as many microbatches in flight as the GPUs' memory holds
// (at most 2p - 1): the shipped default job (Llama-3-8B, tp 4 x pp 2 on 4 DGX H100, seq 8192)
// needs about 23 GiB of activations per microbatch on rank 0 beside 17 GiB of static memory, so
// 80 GB hold two, not the three of 2p - 1 (which ran out of memory at 86.6 GiB). A shorter
// sequence leaves room for 2p - 1; an explicit limit is kept as given.
#include <doctest/doctest.h>

#include <string>

#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {
RunResult run_zb_auto(int seq_length, int memory_limit) {
  RunOptions o;
  o.plan.tp = 4;
  o.plan.pp = 2;
  o.plan.global_batch_size = 64;
  o.plan.seq_length = seq_length;
  o.schedule = "zb-auto";
  o.memory_limit_microbatches = memory_limit;
  return simulate_training(test::shipped_cluster("dgx-h100-4node"), test::shipped_catalog(), test::shipped_model("llama-3-8b"), o);
}
}  // namespace

TEST_CASE("zb-auto's default limit is what the GPU memory holds") {
  const RunResult r = run_zb_auto(8192, 0);
  CHECK(r.zb_auto_memory_limit == 2);
  CHECK(r.oom.empty());
  CHECK(r.peak_memory_bytes <= r.memory.front().capacity_bytes);
}

TEST_CASE("zb-auto's default limit stops at 2p - 1 when memory holds more") {
  const RunResult r = run_zb_auto(2048, 0);
  CHECK(r.zb_auto_memory_limit == 3);
  CHECK(r.oom.empty());
}

TEST_CASE("an explicit zb-auto limit is kept, out of memory or not") {
  const RunResult r = run_zb_auto(8192, 3);
  CHECK(r.zb_auto_memory_limit == 3);
  CHECK_FALSE(r.oom.empty());
}

// What Megatron-LM's optimizer step waits for once a rank's gradients are reduced, on two GPUs in
// two nodes joined by one NIC each (route latency L):
//  - with tied word embeddings, the all-reduce of their main gradients between the pipeline rank
//    holding the input embedding and the one holding the LM head (finalize_model_grads,
//    _allreduce_word_embedding_grads): S = vocab x hidden x 4 B (fp32 main grads) over a 2-GPU
//    ring, S/B + 2L;
//  - every rank of the gradient-norm group (model-parallel; the world with the distributed
//    optimizer) and that group's one-float all-reduces: the norm, and with fp16 the found-inf
//    flag first, each a reduce and a broadcast, 2L.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>

#include "sim/optimizer_sync.hpp"
#include "sim/training_run.hpp"
#include "tests/sim/shipped_inputs.hpp"

using namespace hetsim;

namespace {

constexpr double kNicBytesPerS = 100e9 / 8;  // the test cluster's 100 Gbit/s NIC
constexpr double kNicLatencyS = 24e-6;

// Two single-GPU H100 nodes: a pipeline of two ranks whose only route crosses the NICs.
const Cluster& two_nodes() {
  static const Cluster c = test::one_group_cluster("two-single-gpu-nodes", "h100-sxm", 2, 1, 370, 100);
  return c;
}

RunOptions pipeline_of_two(const std::string& schedule = "1f1b") {
  RunOptions o;
  o.plan.pp = 2;
  o.plan.seq_length = 1024;
  o.plan.global_batch_size = 4;
  o.schedule = schedule;
  return o;
}

RunResult run(const TransformerConfig& model, const RunOptions& o, ReplayObserver* observer = nullptr) {
  return simulate_training(two_nodes(), test::shipped_catalog(), model, o, observer);
}

// When each worker's last op ended and its optimizer step started.
struct StepTimes : ReplayObserver {
  double last_op_end_s[2] = {0, 0};
  double optimizer_start_s[2] = {-1, -1};
  void on_compute(const ComputeRecord& r) override {
    last_op_end_s[r.worker] = std::max(last_op_end_s[r.worker], r.end_s);
  }
  void on_phase(const PhaseRecord& r) override {
    if (r.kind == PhaseKind::kOptimizer) optimizer_start_s[r.worker] = r.start_s;
  }
};

// The embedding group's all-reduce between ranks 0 and 1: S per GPU, S/B + 2L on the NIC route.
void check_embedding_all_reduce(const RunResult& r, double bytes) {
  CHECK(r.tied_embedding_ranks[0] == 0);
  CHECK(r.tied_embedding_ranks[1] == 1);
  CHECK(r.tied_embedding_bytes_per_gpu == doctest::Approx(bytes).epsilon(1e-12));
  CHECK(r.tied_embedding_reduce_s == doctest::Approx(bytes / kNicBytesPerS + 2 * kNicLatencyS).epsilon(1e-9));
}

}  // namespace

TEST_CASE("tied embeddings on two pipeline ranks: one all-reduce of their main gradients, S/B + 2L") {
  const TransformerConfig& model = test::shipped_model("llama-3.2-1b");
  REQUIRE(model.tied_embeddings);
  const RunResult r = run(model, pipeline_of_two());
  const double bytes = static_cast<double>(model.vocab_size) * model.hidden_size * 4;
  check_embedding_all_reduce(r, bytes);
  // Neither rank steps its optimizer before it is done: it is exposed on both.
  for (double exposed : r.gradient_reduce_exposed_s_per_rank) CHECK(exposed >= r.tied_embedding_reduce_s);
  CHECK(r.iteration_time_s >= r.pipeline_time_s + r.tied_embedding_reduce_s);

  // fp16 without --accumulate-allreduce-grads-in-fp32 keeps 2-byte main gradients.
  RunOptions fp16 = pipeline_of_two();
  fp16.plan.dtype = Dtype::kFp16;
  CHECK(run(model, fp16).tied_embedding_bytes_per_gpu == doctest::Approx(bytes / 2).epsilon(1e-12));
}

TEST_CASE("no tied-embedding all-reduce when the embeddings are untied or one rank holds both ends") {
  TransformerConfig untied = test::shipped_model("llama-3.2-1b");
  untied.tied_embeddings = false;
  CHECK(run(untied, pipeline_of_two()).tied_embedding_ranks[0] == -1);
  const TransformerConfig& tied = test::shipped_model("llama-3.2-1b");
  // A V-shaped schedule puts the first and the last stage on rank 0.
  RunOptions v_shape = pipeline_of_two("zb-v");
  v_shape.plan.vpp = 2;
  const RunResult v = run(tied, v_shape);
  CHECK(v.tied_embedding_ranks[0] == -1);
  CHECK(v.tied_embedding_reduce_s == 0);
  RunOptions one_rank = pipeline_of_two();
  one_rank.plan.pp = 1;
  CHECK(run(tied, one_rank).tied_embedding_ranks[0] == -1);
}

TEST_CASE("multi-token prediction: the last stage's embedding copy is all-reduced with the first's, as tied embeddings are") {
  // Megatron-core's MTP looks up the next tokens' embedding on the last stage, so untied
  // embeddings still need the embedding group's all-reduce of S = vocab x hidden x 4 B.
  TransformerConfig untied = test::shipped_model("llama-3.2-1b");
  untied.tied_embeddings = false;
  untied.mtp_depth = 1;
  const RunResult r = run(untied, pipeline_of_two());
  check_embedding_all_reduce(r, static_cast<double>(untied.vocab_size) * untied.hidden_size * 4);
}

TEST_CASE("pipeline ranks step their optimizer together, after the gradient norm's all-reduce") {
  TransformerConfig untied = test::shipped_model("llama-3.2-1b");
  untied.tied_embeddings = false;
  for (const Dtype dtype : {Dtype::kBf16, Dtype::kFp16}) {
    RunOptions o = pipeline_of_two();
    o.plan.dtype = dtype;
    StepTimes times;
    run(untied, o, &times);
    // 1F1B: rank 0 ends last (its last B); rank 1 waits for it, then both for the all-reduces.
    const int all_reduces = dtype == Dtype::kFp16 ? 2 : 1;
    CHECK(times.last_op_end_s[0] > times.last_op_end_s[1]);
    CHECK(times.optimizer_start_s[0] ==
          doctest::Approx(times.last_op_end_s[0] + all_reduces * 2 * kNicLatencyS).epsilon(1e-12));
    CHECK(times.optimizer_start_s[1] == times.optimizer_start_s[0]);
  }
}

TEST_CASE("the gradient-norm group: model-parallel GPUs, or the world with the distributed optimizer") {
  const Cluster& cluster = two_nodes();
  ParallelPlan plan;
  plan.dp = 2;  // one GPU per replica: no model-parallel peer
  const Placement data_parallel{1, 1, 2};
  CHECK_FALSE(optimizer_sync(cluster, plan, data_parallel).across_ranks);
  CHECK(optimizer_sync(cluster, plan, data_parallel).seconds == 0);
  plan.distributed_optimizer = true;  // the norm of the shards: both GPUs
  const OptimizerSync world = optimizer_sync(cluster, plan, data_parallel);
  CHECK(world.across_ranks);
  CHECK(world.seconds == doctest::Approx(2 * kNicLatencyS).epsilon(1e-12));
  ParallelPlan pipeline;
  pipeline.pp = 2;
  pipeline.dtype = Dtype::kFp16;
  const OptimizerSync fp16 = optimizer_sync(cluster, pipeline, Placement{1, 2, 1});
  CHECK(fp16.all_reduces == 2);
  CHECK(fp16.seconds == doctest::Approx(4 * kNicLatencyS).epsilon(1e-12));
}

TEST_CASE("DualPipe's two parameter copies: each pair of mirrored ranks all-reduces its gradients, S/B + 2L") {
  // p 2: ranks 0 and 1 both hold slices 0 and 1, the whole model, each with its own copy of the
  // tied embedding table on the LM head's slice; deepseek-ai/DualPipe adds each copy's gradients
  // into the other's before the step. No tied-embedding all-reduce: each rank holds both ends.
  const TransformerConfig& model = test::shipped_model("llama-3.2-1b");
  RunOptions o = pipeline_of_two("dualpipe");
  o.plan.vpp = 2;
  StepTimes times;
  const RunResult r = run(model, o, &times);
  const double bytes = 4 * (model.total_params() + static_cast<double>(model.vocab_size) * model.hidden_size);
  CHECK(r.tied_embedding_ranks[0] == -1);
  REQUIRE(r.mirrored_copy_ranks.size() == 1);
  CHECK(r.mirrored_copy_ranks[0] == std::array<int, 2>{0, 1});
  CHECK(r.mirrored_copy_bytes_per_gpu == doctest::Approx(bytes).epsilon(1e-12));
  CHECK(r.mirrored_copy_reduce_s == doctest::Approx(bytes / kNicBytesPerS + 2 * kNicLatencyS).epsilon(1e-9));
  // Neither rank steps before it is done.
  const double both_done = std::max(times.last_op_end_s[0], times.last_op_end_s[1]);
  for (int w = 0; w < 2; ++w) CHECK(times.optimizer_start_s[w] >= both_done + r.mirrored_copy_reduce_s - 1e-12);

  // With the distributed optimizer only each GPU's reduce-scattered shard is exchanged: 1/dp.
  static const Cluster four = test::one_group_cluster("four-single-gpu-nodes", "h100-sxm", 4, 1, 370, 100);
  RunOptions sharded = o;
  sharded.plan.global_batch_size = 8;
  sharded.plan.distributed_optimizer = true;
  const RunResult two_replicas = simulate_training(four, test::shipped_catalog(), model, sharded);
  CHECK(two_replicas.mirrored_copy_bytes_per_gpu == doctest::Approx(bytes / 2).epsilon(1e-12));
  // One direction keeps one copy of every slice: nothing to exchange.
  CHECK(run(model, pipeline_of_two()).mirrored_copy_ranks.empty());
}

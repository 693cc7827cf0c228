// Data-parallel gradient reduction during the replay: a bucket's ring as flows agrees with the
// ring closed form on a uniform ring and with the alpha-beta path; buckets follow Megatron's
// size rule and, with --overlap-grad-reduce, hide reduction behind the backward; the distributed
// optimizer reduce-scatters and gathers parameters back.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/data_parallel_sync.hpp"
#include "sim/training_run.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;

namespace {
const std::string kRoot = HETSIM_SOURCE_DIR;

struct Phases : ReplayObserver {
  std::vector<PhaseRecord> of_worker_0;
  void on_phase(const PhaseRecord& r) override {
    if (r.worker == 0 && r.kind != PhaseKind::kOptimizer) of_worker_0.push_back(r);
  }
};

struct Setup {
  GpuCatalog catalog = GpuCatalog::load(kRoot + "/models/gpus");
  Cluster cluster = load_cluster(kRoot + "/topologies/clusters/dgx-h100-4node.json", catalog.keys());
  TransformerConfig model = load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");
};

// tp 8 x pp 1 on four DGX H100: each tensor-parallel index reduces over a ring of four GPUs, one
// per node, every hop through the GPU's own 400 Gbit/s NIC: a uniform ring.
RunOptions data_parallel_only() {
  RunOptions o;
  o.plan.tp = 8;
  o.plan.pp = 1;
  o.plan.global_batch_size = 8;
  o.plan.seq_length = 2048;
  return o;
}
}  // namespace

TEST_CASE("a bucket's ring of flows takes 2(n-1)/n S/B + 2(n-1)L on a uniform ring, as alpha-beta does") {
  Setup s;
  Phases flows;
  const RunResult flow_run = simulate_training(s.cluster, s.catalog, s.model, data_parallel_only(), &flows);
  REQUIRE(flows.of_worker_0.size() == 1);  // no overlap: one bucket per chunk
  const PhaseRecord& bucket = flows.of_worker_0.front();
  CHECK(bucket.op == CollectiveOp::kAllReduce);
  const double n = 4;
  const double nic = 400e9 / 8;  // ConnectX-7, dgx-h100-4node.json
  const double latency = s.cluster.route_latency_s(0, 8);
  const double closed = 2 * (n - 1) / n * bucket.bytes_per_gpu / nic + 2 * (n - 1) * latency;
  CHECK(bucket.end_s - bucket.start_s == doctest::Approx(closed).epsilon(1e-9));
  CHECK(flow_run.gradient_reduce_s_per_rank[0] == doctest::Approx(closed).epsilon(1e-9));

  RunOptions ab = data_parallel_only();
  ab.alpha_beta_collectives = true;
  const RunResult ab_run = simulate_training(s.cluster, s.catalog, s.model, ab);
  CHECK(ab_run.gradient_reduce_s_per_rank[0] == doctest::Approx(closed).epsilon(1e-9));
  CHECK(ab_run.iteration_time_s == doctest::Approx(flow_run.iteration_time_s).epsilon(1e-9));
  // The alpha-beta path counts the bytes the flows would have carried.
  CHECK(ab_run.bytes_nic == doctest::Approx(flow_run.bytes_nic).epsilon(1e-9));
  CHECK(flow_run.bytes_nic > 0);
}

TEST_CASE("buckets follow Megatron's size rule and overlap hides reduction behind the backward") {
  Setup s;
  CHECK(default_bucket_params(4) == 40e6);
  CHECK(default_bucket_params(128) == 128e6);
  RunOptions o = data_parallel_only();
  o.overlap_grad_reduce = true;
  o.ddp_bucket_params = 20e6;
  Phases overlapped;
  const RunResult with = simulate_training(s.cluster, s.catalog, s.model, o, &overlapped);
  Phases serial;
  const RunResult without = simulate_training(s.cluster, s.catalog, s.model, data_parallel_only(), &serial);
  // Llama-3.2-1B over tp 8: ~154M parameters per GPU (embedding and head included, tied).
  const double params = serial.of_worker_0.front().bytes_per_gpu / 4;
  CHECK(overlapped.of_worker_0.size() == static_cast<std::size_t>(std::ceil(params / 20e6)));
  double bytes = 0;
  for (const PhaseRecord& r : overlapped.of_worker_0) bytes += r.bytes_per_gpu;
  CHECK(bytes == doctest::Approx(params * 4).epsilon(1e-12));
  // Buckets run one at a time, in order.
  for (std::size_t i = 1; i < overlapped.of_worker_0.size(); ++i)
    CHECK(overlapped.of_worker_0[i].start_s >= overlapped.of_worker_0[i - 1].end_s);
  // The first buckets start before the backward ends, so less of the reduction is exposed.
  CHECK(overlapped.of_worker_0.front().start_s < with.pipeline_time_s);
  CHECK(with.gradient_reduce_exposed_s_per_rank[0] < without.gradient_reduce_exposed_s_per_rank[0]);
  CHECK(with.iteration_time_s < without.iteration_time_s);
  CHECK(without.gradient_reduce_exposed_s_per_rank[0] ==
        doctest::Approx(without.gradient_reduce_s_per_rank[0]).epsilon(1e-9));
}

TEST_CASE("the distributed optimizer reduce-scatters gradients and all-gathers bf16 parameters") {
  Setup s;
  RunOptions o = data_parallel_only();
  o.plan.distributed_optimizer = true;
  Phases phases;
  const RunResult r = simulate_training(s.cluster, s.catalog, s.model, o, &phases);
  REQUIRE(phases.of_worker_0.size() == 2);
  const PhaseRecord& reduce = phases.of_worker_0[0];
  const PhaseRecord& gather = phases.of_worker_0[1];
  CHECK(reduce.kind == PhaseKind::kGradientReduce);
  CHECK(reduce.op == CollectiveOp::kReduceScatter);
  CHECK(gather.kind == PhaseKind::kParameterGather);
  CHECK(gather.op == CollectiveOp::kAllGather);
  CHECK(gather.bytes_per_gpu == doctest::Approx(reduce.bytes_per_gpu / 2).epsilon(1e-12));
  // The gather follows the optimizer step and ends the iteration.
  CHECK(gather.start_s > reduce.end_s);
  CHECK(r.iteration_time_s == doctest::Approx(gather.end_s).epsilon(1e-12));
}

TEST_CASE("a negative bucket size is refused") {
  Setup s;
  RunOptions o = data_parallel_only();
  o.ddp_bucket_params = -1;
  CHECK_THROWS_WITH_AS(simulate_training(s.cluster, s.catalog, s.model, o),
                       "--ddp-bucket-size -1 must be >= 0 parameters (0: Megatron's default)", PlanError);
}

TEST_CASE("ZeRO-2 reduce-scatters every microbatch's gradients: m times the traffic of stage 1") {
  Setup s;
  RunOptions stage1 = data_parallel_only();
  stage1.plan.zero_stage = 1;
  stage1.plan.global_batch_size = 16;  // 4 microbatches per replica
  RunOptions stage2 = stage1;
  stage2.plan.zero_stage = 2;
  Phases one;
  Phases two;
  const RunResult r1 = simulate_training(s.cluster, s.catalog, s.model, stage1, &one);
  const RunResult r2 = simulate_training(s.cluster, s.catalog, s.model, stage2, &two);
  int reduces = 0;
  for (const PhaseRecord& r : two.of_worker_0) reduces += r.kind == PhaseKind::kGradientReduce;
  CHECK(reduces == 4);
  // The NIC bytes: four reduce-scatters instead of one, the all-gather once in both.
  const double per_reduce = one.of_worker_0.front().bytes_per_gpu;
  const double per_gather = one.of_worker_0.back().bytes_per_gpu;
  CHECK((r2.bytes_nic - r1.bytes_nic) / r1.bytes_nic ==
        doctest::Approx(3 * per_reduce / (per_reduce + per_gather)).epsilon(1e-9));
  // Gradients are sharded: less static memory than stage 1.
  CHECK(r2.memory.front().static_bytes < r1.memory.front().static_bytes);
}

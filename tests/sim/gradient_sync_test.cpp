// Data-parallel gradient reduction during the replay: a bucket's ring as flows agrees with the
// ring closed form on a uniform ring and with the alpha-beta path; buckets follow Megatron's
// size rule and, with --overlap-grad-reduce, hide reduction behind the backward; the distributed
// optimizer reduce-scatters and gathers parameters back; ZeRO-2 reduce-scatters every microbatch and
// ZeRO-3 also gathers the weights before every forward and backward.
#include <doctest/doctest.h>

#include <algorithm>
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
  std::vector<ComputeRecord> ops_of_worker_0;
  void on_phase(const PhaseRecord& r) override {
    if (r.worker == 0 && r.kind != PhaseKind::kOptimizer) of_worker_0.push_back(r);
  }
  void on_compute(const ComputeRecord& r) override {
    if (r.worker == 0) ops_of_worker_0.push_back(r);
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

// The same with a ZeRO stage and m = 4 microbatches per replica.
RunOptions with_zero_stage(int stage) {
  RunOptions o = data_parallel_only();
  o.plan.zero_stage = stage;
  o.plan.global_batch_size = 16;
  return o;
}

// A run and what worker 0 did in it.
struct Observed {
  Phases of;
  RunResult result;
};
Observed observe(const Setup& s, const RunOptions& o) {
  Observed run;
  run.result = simulate_training(s.cluster, s.catalog, s.model, o, &run.of);
  return run;
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
                       "--ddp-bucket-size -1 must be a finite number >= 0 of parameters (0: Megatron's default)", PlanError);
}

TEST_CASE("ZeRO-2 reduce-scatters every microbatch's gradients: m times the traffic of stage 1") {
  Setup s;
  const auto [one, r1] = observe(s, with_zero_stage(1));
  const auto [two, r2] = observe(s, with_zero_stage(2));
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

TEST_CASE("ZeRO-3 all-gathers the weights layer by layer before every forward and backward, one layer ahead") {
  Setup s;
  const auto [two, r2] = observe(s, with_zero_stage(2));
  const auto [three, r3] = observe(s, with_zero_stage(3));
  std::vector<PhaseRecord> gathers;
  for (const PhaseRecord& r : three.of_worker_0)
    if (r.kind == PhaseKind::kWeightGather) gathers.push_back(r);
  const int m = 4;
  const int layers = s.model.num_layers;
  // One gather per layer per F and per B, none after the step.
  REQUIRE(gathers.size() == static_cast<std::size_t>(2 * m * layers));
  const double gather_bytes = two.of_worker_0.back().bytes_per_gpu;  // stage 2's gather after the step
  CHECK(two.of_worker_0.back().kind == PhaseKind::kParameterGather);
  CHECK(gathers.front().bytes_per_gpu == doctest::Approx(gather_bytes / layers).epsilon(1e-12));
  // The first layer's gather runs alone on the uniform ring: (n-1)/n S/B + (n-1)L; the first
  // forward starts when it is there.
  const double n = 4;
  const double nic = 400e9 / 8;
  const double closed = (n - 1) / n * gather_bytes / layers / nic + (n - 1) * s.cluster.route_latency_s(0, 8);
  CHECK(gathers.front().start_s == 0);
  CHECK(gathers.front().end_s == doctest::Approx(closed).epsilon(1e-9));
  const auto& ops = three.ops_of_worker_0;
  REQUIRE(!ops.empty());
  CHECK(ops.front().start_s == doctest::Approx(closed).epsilon(1e-9));
  // One layer ahead: the gather of an op's layer l (l >= 1) starts only once layer l-1 computes,
  // i.e. after the op started; an op ends only after its last layer's gather.
  std::size_t g = 0;
  for (const ComputeRecord& op : ops) {
    if (op.op.kind == OpKind::kWeight) continue;
    REQUIRE(g + layers <= gathers.size());
    for (int l = 1; l < layers; ++l) CHECK(gathers[g + l].start_s >= op.start_s - 1e-12);
    CHECK(op.end_s > gathers[g + layers - 1].end_s);
    g += layers;
  }
  CHECK(r3.parameter_gather_s_per_rank[0] > 0);
  // The same compute with gathers added and stage 2's trailing gather (after the step) gone: no
  // faster than stage 2 without that gather.
  const PhaseRecord& trailing = two.of_worker_0.back();
  CHECK(r3.iteration_time_s > r2.iteration_time_s - (trailing.end_s - trailing.start_s));
  // NIC bytes: 2m gathers replace stage 2's one; reduce-scatters (fp32, twice a gather's bytes)
  // stay m: (2m - 1) S_g / (m 2 S_g + S_g).
  CHECK((r3.bytes_nic - r2.bytes_nic) / r2.bytes_nic == doctest::Approx((2.0 * m - 1) / (2.0 * m + 1)).epsilon(1e-9));
  // The weights are sharded too; two layers' bf16 weights are gathered at a time on top.
  const double weights = gather_bytes;  // bf16, whole chunk, one GPU
  CHECK(r2.memory.front().static_bytes - r3.memory.front().static_bytes ==
        doctest::Approx(weights * (1 - 1 / n) - 2 * weights / layers).epsilon(1e-9));

  // The alpha-beta path counts the bytes of every gather and every microbatch's reduce-scatter.
  for (RunOptions o : {with_zero_stage(2), with_zero_stage(3)}) {
    const RunResult flows = simulate_training(s.cluster, s.catalog, s.model, o);
    o.alpha_beta_collectives = true;
    const RunResult closed_forms = simulate_training(s.cluster, s.catalog, s.model, o);
    CHECK(closed_forms.bytes_nic == doctest::Approx(flows.bytes_nic).epsilon(1e-9));
    CHECK(closed_forms.iteration_time_s > 0);
  }
}

TEST_CASE("ZeRO-3 with local steps is refused") {
  Setup s;
  RunOptions o = data_parallel_only();
  o.plan.zero_stage = 3;
  o.sync_every = 4;
  CHECK_THROWS_WITH_AS(simulate_training(s.cluster, s.catalog, s.model, o),
                       "--sync-every 4 keeps replicas apart between synchronisations, but --zero-stage "
                       "3 shards the weights across them: use ZeRO stage 0, 1 or 2 with local steps",
                       PlanError);
}

TEST_CASE("--overlap-param-gather gathers each bucket before the next forward needs it") {
  Setup s;
  // At 2,048 tokens the first forward outlasts the gathers; at 128 its last layers wait for theirs.
  for (const int seq : {2048, 128}) {
    CAPTURE(seq);
    RunOptions o = data_parallel_only();
    o.plan.seq_length = seq;
    o.plan.distributed_optimizer = true;
    o.overlap_grad_reduce = true;
    Phases after_step;
    const RunResult serial = simulate_training(s.cluster, s.catalog, s.model, o, &after_step);
    o.overlap_param_gather = true;
    Phases overlapped;
    const RunResult r = simulate_training(s.cluster, s.catalog, s.model, o, &overlapped);
    std::vector<PhaseRecord> gathers;
    double gathered_bytes = 0;
    for (const PhaseRecord& p : overlapped.of_worker_0) {
      CHECK(p.kind != PhaseKind::kParameterGather);  // nothing is gathered after the step
      if (p.kind != PhaseKind::kWeightGather) continue;
      gathers.push_back(p);
      gathered_bytes += p.bytes_per_gpu;
    }
    double bytes_after_step = 0;
    std::size_t buckets = 0;
    for (const PhaseRecord& p : after_step.of_worker_0)
      if (p.kind == PhaseKind::kParameterGather) {
        bytes_after_step += p.bytes_per_gpu;
        ++buckets;
      }
    // The same buckets, the last one (the first layers') first.
    REQUIRE(gathers.size() == buckets);
    REQUIRE(buckets > 1);
    CHECK(gathered_bytes == doctest::Approx(bytes_after_step).epsilon(1e-12));
    CHECK(gathers.front().bytes_per_gpu < gathers.back().bytes_per_gpu);
    // The first forward waits for the first bucket only: (n-1)/n S/B + (n-1)L on the uniform ring.
    const double n = 4;
    const double nic = 400e9 / 8;
    const double first = (n - 1) / n * gathers.front().bytes_per_gpu / nic + (n - 1) * s.cluster.route_latency_s(0, 8);
    const ComputeRecord& f0 = overlapped.ops_of_worker_0.front();
    CHECK(f0.start_s == doctest::Approx(first).epsilon(1e-9));
    // The forward runs bucket by bucket, each for its share of the forward's time d, starting
    // once the previous one is done and its own weights are there.
    const ComputeRecord& unhindered = after_step.ops_of_worker_0.front();
    const double d = unhindered.end_s - unhindered.start_s;
    double end = f0.start_s;
    for (const PhaseRecord& g : gathers) end = std::max(end, g.end_s) + g.bytes_per_gpu / gathered_bytes * d;
    CHECK(f0.end_s == doctest::Approx(end).epsilon(1e-12));
    // One bucket ahead: a bucket's gather starts once the previous bucket's layers compute.
    double computing = f0.start_s;
    for (std::size_t i = 1; i < gathers.size(); ++i) {
      computing = std::max(computing, gathers[i - 1].end_s);
      CHECK(gathers[i].start_s >= computing - 1e-12);
      computing += gathers[i - 1].bytes_per_gpu / gathered_bytes * d;
    }
    CHECK(f0.end_s >= gathers.back().end_s);
    CHECK(r.parameter_gather_s_per_rank[0] > 0);
    CHECK(r.iteration_time_s < serial.iteration_time_s);
    CHECK((f0.end_s - f0.start_s > d + 1e-6) == (seq == 128));
  }
}

TEST_CASE("--overlap-param-gather needs the distributed optimizer and --overlap-grad-reduce") {
  Setup s;
  RunOptions o = data_parallel_only();
  o.overlap_param_gather = true;
  o.overlap_grad_reduce = true;
  const std::string message =
      "--overlap-param-gather needs the distributed optimizer (--use-distributed-optimizer or "
      "--zero-stage 1 or 2) and --overlap-grad-reduce, as Megatron-LM requires";
  CHECK_THROWS_WITH_AS(simulate_training(s.cluster, s.catalog, s.model, o), message.c_str(), PlanError);
  o.plan.distributed_optimizer = true;
  o.overlap_grad_reduce = false;
  CHECK_THROWS_WITH_AS(simulate_training(s.cluster, s.catalog, s.model, o), message.c_str(), PlanError);
}

TEST_CASE("ZeRO-3: an op that stalls on a late layer hands its gradients over only when they exist") {
  Setup s;
  // Short sequences: a layer computes faster than the next layer's weights arrive.
  RunOptions o = with_zero_stage(3);
  o.plan.seq_length = 128;
  const Observed run = observe(s, o);
  RunOptions plain = o;
  plain.plan.zero_stage = 2;
  const Observed unhindered = observe(s, plain);
  std::vector<ComputeRecord> backwards, backwards_unhindered;
  for (const ComputeRecord& op : run.of.ops_of_worker_0)
    if (op.op.kind == OpKind::kBackward) backwards.push_back(op);
  for (const ComputeRecord& op : unhindered.of.ops_of_worker_0)
    if (op.op.kind == OpKind::kBackward) backwards_unhindered.push_back(op);
  std::vector<PhaseRecord> reduces;
  for (const PhaseRecord& p : run.of.of_worker_0)
    if (p.kind == PhaseKind::kGradientReduce) reduces.push_back(p);
  REQUIRE(backwards.size() == 4);
  REQUIRE(reduces.size() == 4);  // one bucket per microbatch (no --overlap-grad-reduce)
  bool stalled = false;
  for (std::size_t i = 0; i < backwards.size(); ++i) {
    const double d = backwards_unhindered[i].end_s - backwards_unhindered[i].start_s;
    stalled = stalled || backwards[i].end_s - backwards[i].start_s > d + 1e-9;
    CHECK(reduces[i].start_s >= backwards[i].end_s - 1e-12);
  }
  CHECK(stalled);
}

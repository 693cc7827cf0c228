#include "traces/serving_trace.hpp"

#include <fmt/format.h>

#include <array>

namespace hetsim {

namespace {

constexpr int kRouterPid = 0;
// Request lanes sit below a replica's GPU tracks: their thread ids start here.
constexpr int kLaneTidBase = 1 << 24;

}  // namespace

ServingTrace::ServingTrace(const std::string& path, const Cluster& cluster, int requests, int tp, int pp)
    : cluster_(cluster), writer_(path), first_scheduled_s_(static_cast<std::size_t>(requests), -1.0), tp_(tp), pp_(pp) {
  writer_.name_process(kRouterPid, "router", 0);
}

void ServingTrace::name_replica(int replica) {
  if (replica >= static_cast<int>(named_replica_.size())) named_replica_.resize(replica + 1, false);
  if (named_replica_[replica]) return;
  named_replica_[replica] = true;
  writer_.name_process(replica + 1, fmt::format("replica {}", replica), replica + 1);
}

void ServingTrace::iteration(int replica, const std::vector<double>& stage_start_s, const std::vector<double>& stage_s,
                             const serving::Step& step) {
  const int pid = replica + 1;
  name_replica(replica);
  const long prefill = step.work.prefill_tokens;
  const long decode = step.work.decode_tokens;
  const char* name = prefill > 0 && decode > 0 ? "prefill+decode" : prefill > 0 ? "prefill" : "decode";
  const std::array<TraceArg, 3> args{TraceArg{"prefill_tokens", static_cast<long long>(prefill)},
                                     TraceArg{"decode_tokens", static_cast<long long>(decode)},
                                     TraceArg{"sequences", static_cast<long long>(step.entries.size())}};
  for (const serving::StepEntry& e : step.entries) {
    if (first_scheduled_s_[e.request] < 0) first_scheduled_s_[e.request] = stage_start_s.front();
  }
  // A track per GPU, its thread id the GPU id; a stage's tp GPUs run in lockstep.
  for (int s = 0; s < pp_; ++s) {
    for (int rank = 0; rank < tp_; ++rank)
      writer_.slice(pid, serving::replica_gpu(replica, s, rank, tp_, pp_), name, "iteration", stage_start_s[s],
                    stage_s[s], args);
  }
}

void ServingTrace::reconfiguration(const serving::Reconfiguration& r) {
  const int pid = r.replica + 1;
  name_replica(r.replica);
  const std::array<TraceArg, 4> args{TraceArg{"layers_moved", static_cast<long long>(r.layers_moved)},
                                     TraceArg{"weights_bytes", r.weights_bytes}, TraceArg{"kv_bytes", r.kv_bytes},
                                     TraceArg{"drain_s", r.drained_s - r.requested_s}};
  for (int s = 0; s < pp_; ++s) {
    for (int rank = 0; rank < tp_; ++rank)
      writer_.slice(pid, serving::replica_gpu(r.replica, s, rank, tp_, pp_), "re-split", "reconfiguration",
                    r.drained_s, r.transfer_s, args);
  }
}

void ServingTrace::commit(const serving::ServingResult& result) {
  named_replica_.resize(result.replicas.size(), false);
  for (std::size_t r = 0; r < result.replicas.size(); ++r) {
    const serving::ReplicaStats& rep = result.replicas[r];
    // A replica the router never used still gets its process, for its GPU tracks' names.
    if (!named_replica_[r]) writer_.name_process(static_cast<int>(r) + 1, fmt::format("replica {}", r), static_cast<int>(r) + 1);
    for (std::size_t i = 0; i < rep.gpus.size(); ++i) {
      const GpuId g = rep.gpus[i];
      writer_.name_thread(static_cast<int>(r) + 1, g,
                          fmt::format("GPU {} stage {} ({}, {})", g, i / static_cast<std::size_t>(tp_),
                                      cluster_.gpu(g).gpu_type, cluster_.node_name(cluster_.gpu(g).node)),
                          g);
    }
  }
  // Requests on lanes: each takes the first lane of its replica (or of the router) free at its start.
  std::vector<std::vector<double>> lanes(result.replicas.size() + 1);
  const auto lane_for = [&](std::size_t process, double start, double end) {
    auto& ends = lanes[process];
    for (std::size_t i = 0; i < ends.size(); ++i) {
      if (ends[i] <= start) {
        ends[i] = end;
        return static_cast<int>(i);
      }
    }
    ends.push_back(end);
    return static_cast<int>(ends.size() - 1);
  };
  for (std::size_t i = 0; i < result.requests.size(); ++i) {
    const serving::RequestOutcome& q = result.requests[i];
    const double scheduled = first_scheduled_s_[i] < 0 ? q.arrival_s : first_scheduled_s_[i];
    const std::array<TraceArg, 4> args{TraceArg{"request", static_cast<long long>(i)},
                                       TraceArg{"prompt_tokens", static_cast<long long>(q.prompt_tokens)},
                                       TraceArg{"output_tokens", static_cast<long long>(q.output_tokens)},
                                       TraceArg{"ttft_ms", (q.first_token_s - q.arrival_s) * 1e3}};
    const unsigned long long flow = i + 1;
    const int wait_lane = lane_for(0, q.arrival_s, scheduled);
    writer_.slice(kRouterPid, kLaneTidBase + wait_lane, "waiting", "request", q.arrival_s, scheduled - q.arrival_s,
                  args, flow, 0);
    const int run_lane = lane_for(static_cast<std::size_t>(q.replica) + 1, scheduled, q.finish_s);
    writer_.slice(q.replica + 1, kLaneTidBase + run_lane, "generating", "request", scheduled, q.finish_s - scheduled,
                  args, 0, flow);
  }
  for (std::size_t p = 0; p < lanes.size(); ++p) {
    for (std::size_t lane = 0; lane < lanes[p].size(); ++lane)
      writer_.name_thread(static_cast<int>(p), kLaneTidBase + static_cast<int>(lane),
                          fmt::format("requests {}", lane), kLaneTidBase + static_cast<int>(lane));
  }
  writer_.commit();
}

}  // namespace hetsim

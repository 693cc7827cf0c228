#include "traces/replay_trace.hpp"

#include <fmt/format.h>

#include <array>
#include <set>

#include "base/units.hpp"

namespace hetsim {

namespace {
const char* kind_name(TransferKind kind) {
  return kind == TransferKind::kActivation ? "activations" : "gradients";
}
// Thread ids of peer streams start above every GPU's compute and reduction streams.
constexpr int kFirstPeerTid = 1000;
}  // namespace

ReplayTrace::ReplayTrace(const std::string& path, const Cluster& cluster, const Placement& placement,
                         int chunks_per_rank)
    : cluster_(cluster),
      placement_(placement),
      chunks_per_rank_(chunks_per_rank),
      writer_(path) {
  std::set<int> named_nodes;
  memory_counter_name_.resize(static_cast<std::size_t>(cluster_.gpu_count()));
  for (int w = 0; w < placement_.workers(); ++w) {
    gpus_of_worker_.push_back(placement_.worker_gpus(w));
    for (GpuId g : gpus_of_worker_.back()) memory_counter_name_[g] = fmt::format("gpu {} memory GiB", g);
    for (GpuId g : placement_.worker_gpus(w)) {
      const GpuPlace& place = cluster_.gpu(g);
      if (named_nodes.insert(place.node).second)
        writer_.name_process(pid(g),
                             fmt::format("node {} ({})", place.node, cluster_.sites()[place.site].name),
                             place.node);
      const int replica = placement_.replica_of(w);
      const int rank = placement_.rank_of(w);
      writer_.name_thread(pid(g), compute_tid(g),
                          fmt::format("gpu {} compute (pp rank {}, dp {})", g, rank, replica),
                          compute_tid(g));
      writer_.name_thread(pid(g), reduce_tid(g), fmt::format("gpu {} data-parallel collectives", g),
                          reduce_tid(g));
    }
  }
}

int ReplayTrace::peer_tid(GpuId self, GpuId peer, bool sending, TransferKind kind) {
  auto [it, inserted] = peer_tids_.try_emplace({self, peer, sending, kind}, 0);
  if (inserted) {
    const int p = pid(self);
    auto [next, unused] = next_peer_tid_.try_emplace(p, kFirstPeerTid);
    it->second = next->second++;
    writer_.name_thread(p, it->second,
                        fmt::format("gpu {} {} {} {} gpu {}", self, sending ? "send" : "recv",
                                    kind_name(kind), sending ? "->" : "<-", peer),
                        it->second);
  }
  return it->second;
}

int ReplayTrace::stream_tid(GpuId gpu, Stream stream) {
  auto [it, inserted] = stream_tids_.try_emplace({gpu, stream}, 0);
  if (inserted) {
    const int p = pid(gpu);
    auto [next, unused] = next_peer_tid_.try_emplace(p, kFirstPeerTid);
    it->second = next->second++;
    const char* what = stream == Stream::kOffload        ? "host copy offload (D2H)"
                       : stream == Stream::kReload       ? "host copy reload (H2D)"
                       : stream == Stream::kWeightGather ? "weight gathers (ZeRO-3 / overlap-param-gather)"
                                                         : "expert data-parallel collectives";
    writer_.name_thread(p, it->second, fmt::format("gpu {} {}", gpu, what), it->second);
  }
  return it->second;
}

void ReplayTrace::on_copy(const CopyRecord& r) {
  const std::string name = fmt::format("{} mb{}", r.offload ? "offload" : "reload", r.op.microbatch);
  const std::array<TraceArg, 3> args{{{"microbatch", static_cast<long long>(r.op.microbatch)},
                                      {"chunk", static_cast<long long>(r.op.chunk)},
                                      {"bytes", r.bytes_per_gpu}}};
  for (GpuId g : gpus_of_worker_[r.worker])
    writer_.slice(pid(g), stream_tid(g, r.offload ? Stream::kOffload : Stream::kReload), name, "copy", r.start_s, r.end_s - r.start_s, args);
}

void ReplayTrace::on_compute(const ComputeRecord& r) {
  name_.clear();
  if (chunks_per_rank_ > 1)
    fmt::format_to(std::back_inserter(name_), "{}{}.{}", to_char(r.op.kind), r.op.microbatch, r.op.chunk);
  else
    fmt::format_to(std::back_inserter(name_), "{}{}", to_char(r.op.kind), r.op.microbatch);
  const std::string_view name(name_.data(), name_.size());
  const std::array<TraceArg, 6> args{{{"microbatch", static_cast<long long>(r.op.microbatch)},
                                      {"chunk", static_cast<long long>(r.op.chunk)},
                                      {"stage", static_cast<long long>(r.stage)},
                                      {"pp_rank", static_cast<long long>(r.rank)},
                                      {"flops", r.flops},
                                      {"activation_bytes", r.activation_bytes}}};
  for (GpuId g : gpus_of_worker_[r.worker])
    writer_.slice(pid(g), compute_tid(g), name, "compute", r.start_s, r.end_s - r.start_s, args);
}

void ReplayTrace::on_transfer(const TransferRecord& r) {
  const auto& from = gpus_of_worker_[r.src_worker];
  const auto& to = gpus_of_worker_[r.dst_worker];
  name_.clear();
  fmt::format_to(std::back_inserter(name_), "{} mb{}", kind_name(r.kind), r.microbatch);
  const std::string_view name(name_.data(), name_.size());
  const std::array<TraceArg, 3> args{{{"microbatch", static_cast<long long>(r.microbatch)},
                                      {"dst_stage", static_cast<long long>(r.dst_stage)},
                                      {"bytes", r.bytes_per_gpu}}};
  // The send slice is the time the bytes leave the sender, the recv slice the time they arrive
  // (the same interval, one route latency later): messages in flight on one channel overlap
  // only in the latency between the two, so neither stream's slices overlap.
  const double drain_s = r.drained_s - r.start_s;
  const double latency_s = r.end_s - r.drained_s;
  for (std::size_t t = 0; t < from.size(); ++t) {
    // One arrow per tensor-parallel GPU pair: ids are unique across the whole trace.
    const unsigned long long flow_id = (r.id - 1) * from.size() + t + 1;
    writer_.slice(pid(from[t]), peer_tid(from[t], to[t], true, r.kind), name, "send", r.start_s,
                  drain_s, args, flow_id, 0);
    writer_.slice(pid(to[t]), peer_tid(to[t], from[t], false, r.kind), name, "recv",
                  r.start_s + latency_s, drain_s, args, 0, flow_id);
  }
}

void ReplayTrace::on_phase(const PhaseRecord& r) {
  const bool collective = r.kind != PhaseKind::kOptimizer;
  name_.clear();
  switch (r.kind) {
    case PhaseKind::kOptimizer: fmt::format_to(std::back_inserter(name_), "optimizer step"); break;
    case PhaseKind::kGradientReduce: fmt::format_to(std::back_inserter(name_), "gradient {}", to_string(r.op)); break;
    case PhaseKind::kParameterGather: fmt::format_to(std::back_inserter(name_), "parameter {}", to_string(r.op)); break;
    case PhaseKind::kWeightGather: fmt::format_to(std::back_inserter(name_), "weight {}", to_string(r.op)); break;
  }
  const std::string_view name(name_.data(), name_.size());
  const std::array<TraceArg, 1> args{{{"bytes", r.bytes_per_gpu}}};
  for (GpuId g : gpus_of_worker_[r.worker]) {
    const int tid = r.kind == PhaseKind::kWeightGather ? stream_tid(g, Stream::kWeightGather)
                    : r.expert_group                   ? stream_tid(g, Stream::kExpertCollectives)
                    : collective                       ? reduce_tid(g)
                                                       : compute_tid(g);
    writer_.slice(pid(g), tid, name, collective ? "collective" : "compute", r.start_s, r.end_s - r.start_s,
                  std::span<const TraceArg>(args).first(collective ? 1 : 0));
  }
}

void ReplayTrace::on_memory(int worker, double time_s, double static_bytes, double activation_bytes) {
  for (GpuId g : gpus_of_worker_[worker]) {
    const std::string& name = memory_counter_name_[g];
    writer_.counter(pid(g), name, time_s, "static", static_bytes / units::kGiB);
    writer_.counter(pid(g), name, time_s, "activations", activation_bytes / units::kGiB);
  }
}

}  // namespace hetsim

#pragma once
// One sweep point as a job: its keys (the long names of `hetsim run`'s flags, plus the cluster
// variations below) parsed by the very option registration `run` uses, so that a key means
// exactly what the flag means.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tools/hetsim/run_options.hpp"
#include "topologies/cluster_spec.hpp"

namespace hetsim::sweep {

// Sweep keys that vary the cluster file's contents rather than a flag: every node group's GPU
// type, and every WAN link's bandwidth and one-way latency (the cluster file's units).
inline constexpr const char* kGpuTypeKey = "gpu_type";
inline constexpr const char* kWanBandwidthKey = "wan_bandwidth_Gbps";
inline constexpr const char* kWanLatencyKey = "wan_latency_ms";
// Node groups ("site/group") or sites left out of the cluster (cluster_subset.hpp).
inline constexpr const char* kLeaveOutKey = "leave_out";

struct ClusterVariation {
  std::string gpu_type;  // empty: as in the file
  std::optional<double> wan_bandwidth_Gbps;
  std::optional<double> wan_latency_ms;
  std::vector<std::string> leave_out;  // empty: every GPU of the file
  // A printable key naming the variation (empty for none), for caching built clusters.
  std::string cache_key() const;
  void apply(ClusterSpec& spec) const;
};

struct PointJob {
  cli::RunArgs args;
  ClusterVariation variation;
};

// Every key a sweep spec may set: the long names of run's flags, then the cluster variations.
const std::vector<std::string>& job_keys();

// The job of `settings` (an object of key -> value: strings, numbers, booleans, arrays for list
// flags such as layers-per-stage) on top of run's defaults. Throws Error naming the flag and the
// value for anything run would reject while parsing its command line.
PointJob parse_point_job(const nlohmann::json& settings);

}  // namespace hetsim::sweep

// Sweep point -> the argument vector `run` would get -> RunArgs, through run's own options.
#include "tools/sweep/point_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "base/units.hpp"
#include "topologies/link_ranges.hpp"
#include "tools/sweep/cluster_subset.hpp"

namespace hetsim::sweep {

namespace {

// A flag's value as CLI11 reads it: lists comma-separated (the delimiter run registers),
// numbers in JSON's shortest round-trip form.
std::string flag_value(const std::string& key, const nlohmann::json& value) {
  // An empty string would leave "--key=" to take the next argument as its value.
  if (value.is_string() && value.get<std::string>().empty())
    throw Error(fmt::format("{}: got \"\"; expected a value (leave the key out for the default)", key));
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean() || value.is_number()) return value.dump();
  if (value.is_array()) {
    std::string joined;
    for (const nlohmann::json& item : value) {
      if (!item.is_number() && !item.is_string())
        throw Error(
            fmt::format("{}: got {}; expected a list of numbers or strings", key, value.dump()));
      joined += (joined.empty() ? "" : ",") + flag_value(key, item);
    }
    return joined;
  }
  throw Error(fmt::format("{}: got {}; expected a string, a number, a boolean or a list", key,
                          value.dump()));
}

// A WAN figure within the range the cluster file allows for the same figure
// (topologies/link_ranges.hpp), so that a sweep cannot reach what a cluster file cannot.
double variation_number(const std::string& key, const nlohmann::json& value, double low, double high) {
  if (!value.is_number() || !(value.get<double>() >= low && value.get<double>() <= high))
    throw Error(fmt::format("{}: got {}; expected a number in [{:g}, {:g}]", key, value.dump(), low, high));
  return value.get<double>();
}

// A list of site or "site/group" names (one name alone is taken as a list of one).
std::vector<std::string> leave_out_names(const nlohmann::json& value) {
  const auto fail = [&] {
    return Error(fmt::format("{}: got {}; expected a list of sites or \"site/group\" names",
                             kLeaveOutKey, value.dump()));
  };
  const nlohmann::json list = value.is_array() ? value : nlohmann::json::array({value});
  std::vector<std::string> names;
  for (const nlohmann::json& item : list) {
    if (!item.is_string() || item.get<std::string>().empty()) throw fail();
    names.push_back(item.get<std::string>());
  }
  return names;
}

}  // namespace

std::string ClusterVariation::cache_key() const {
  return fmt::format("{}|{}|{}|{}", gpu_type,
                     wan_bandwidth_Gbps ? fmt::format("{}", *wan_bandwidth_Gbps) : "",
                     wan_latency_ms ? fmt::format("{}", *wan_latency_ms) : "",
                     fmt::join(leave_out, ","));
}

void ClusterVariation::apply(ClusterSpec& spec) const {
  sweep::leave_out(spec, leave_out);
  if (!gpu_type.empty())
    for (SiteSpec& site : spec.sites)
      for (NodeGroupSpec& group : site.node_groups) group.gpu_type = gpu_type;
  if ((wan_bandwidth_Gbps || wan_latency_ms) && spec.wan_links.empty())
    throw Error(fmt::format("{} / {}: cluster {} has no WAN links to vary", kWanBandwidthKey,
                            kWanLatencyKey, spec.source_file));
  for (WanLinkSpec& link : spec.wan_links) {
    if (wan_bandwidth_Gbps) {
      // A time-varying link's trace would override the constant figure, so the two cannot mix.
      if (!link.bandwidth_trace.empty())
        throw Error(
            fmt::format("{}: cluster {} gives its WAN links a bandwidth trace; a constant "
                        "bandwidth cannot replace it",
                        kWanBandwidthKey, spec.source_file));
      link.figures.bandwidth_bytes_per_s =
          *wan_bandwidth_Gbps * 1e9 / 8;  // Gbit/s as in the cluster file
    }
    if (wan_latency_ms) link.figures.latency_s = *wan_latency_ms * 1e-3;
  }
}

const std::vector<std::string>& job_keys() {
  static const std::vector<std::string> keys = [] {
    CLI::App app;
    cli::RunArgs args = cli::default_run_args();
    cli::add_run_options(app, args);
    std::vector<std::string> names;
    for (const CLI::Option* option : app.get_options())
      for (const std::string& name : option->get_lnames())
        if (name != "help") names.push_back(name);
    names.insert(names.end(), {kGpuTypeKey, kWanBandwidthKey, kWanLatencyKey, kLeaveOutKey});
    return names;
  }();
  return keys;
}

PointJob parse_point_job(const nlohmann::json& settings) {
  PointJob job{cli::default_run_args(), {}};
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed;
  for (const auto& [key, value] : settings.items()) {
    if (key == kGpuTypeKey) {
      if (!value.is_string() || value.get<std::string>().empty())
        throw Error(fmt::format("{}: got {}; expected a GPU type name", key, value.dump()));
      job.variation.gpu_type = value.get<std::string>();
    } else if (key == kWanBandwidthKey) {
      job.variation.wan_bandwidth_Gbps =
          variation_number(key, value, link_ranges::kMinGbps, link_ranges::kMaxGbps);
    } else if (key == kLeaveOutKey) {
      job.variation.leave_out = leave_out_names(value);
    } else if (key == kWanLatencyKey) {
      job.variation.wan_latency_ms =
          variation_number(key, value, 0, link_ranges::kMaxLatencyS / units::kMillisecond);
    } else {
      reversed.push_back("--" + key + "=" + flag_value("--" + key, value));
    }
  }
  std::reverse(reversed.begin(), reversed.end());
  CLI::App app;
  CLI::Option* schedule = cli::add_run_options(app, job.args);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw Error(e.what());
  }
  job.args.schedule_given = schedule->count() > 0;
  return job;
}

}  // namespace hetsim::sweep

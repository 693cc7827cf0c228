// libFuzzer target: cluster files (topologies/cluster_loader.hpp). Checked specs of a modest size
// are also built into a fabric graph, whose links must have finite figures, and routed end to end:
// the loader promises that what it accepts builds, so an Error from build_cluster is a finding.
#include <cstdint>
#include <string>
#include <vector>

#include "base/data_directory.hpp"
#include "models/gpu_catalog.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "topologies/cluster_loader.hpp"

namespace {

// Accepted clusters may hold 2^20 GPUs; building one that large is a benchmark, not a parse.
constexpr long long kMaxBuiltGpus = 4096;

long long gpu_total(const hetsim::ClusterSpec& spec) {
  long long total = 0;
  for (const auto& site : spec.sites)
    for (const auto& group : site.node_groups)
      total += static_cast<long long>(group.count) * group.gpus_per_node;
  return total;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  static const std::vector<std::string> gpu_types =
      GpuCatalog::load(data_directory() + "/models/gpus").keys();
  return fuzz::expect_input_errors([&] {
    const ClusterSpec spec =
        load_cluster_spec(fuzz::scratch().write("cluster.json", data, size), gpu_types);
    if (gpu_total(spec) > kMaxBuiltGpus) return;
    const Cluster cluster = build_cluster(spec);
    for (const Link& link : cluster.links()) {
      fuzz::require_finite(link.bandwidth_bytes_per_s, "a link's bandwidth");
      if (!(link.bandwidth_bytes_per_s > 0))
        fuzz::finding("a link of bandwidth <= 0: " + std::string(link.name));
      fuzz::require_finite(link.latency_s, "a link's latency");
    }
    fuzz::require_finite(cluster.route_latency_s(0, cluster.gpu_count() - 1), "a route's latency");
  });
}

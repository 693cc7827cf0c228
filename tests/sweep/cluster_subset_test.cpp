// Leaving node groups and sites out of a cluster (the sweep key leave_out).
#include <doctest/doctest.h>

#include "base/error.hpp"
#include "models/gpu_catalog.hpp"
#include "tools/sweep/cluster_subset.hpp"
#include "tools/sweep/point_job.hpp"
#include "topologies/cluster_loader.hpp"

using namespace hetsim;
using namespace hetsim::sweep;

namespace {

const std::string kRoot = HETSIM_SOURCE_DIR;

ClusterSpec cluster(const std::string& name) {
  static const GpuCatalog catalog = GpuCatalog::load(kRoot + "/models/gpus");
  return load_cluster_spec(kRoot + "/topologies/clusters/" + name, catalog.keys());
}

}  // namespace

TEST_CASE("leaving a site out drops its WAN links and renumbers the rest") {
  ClusterSpec spec = cluster("three-site.json");
  leave_out(spec, {"dc-a"});
  REQUIRE(spec.sites.size() == 2);
  CHECK(spec.sites[0].name == "dc-b");
  CHECK(spec.sites[1].name == "dc-c");
  REQUIRE(spec.wan_links.size() == 1);
  CHECK(spec.wan_links[0].site_a == 0);
  CHECK(spec.wan_links[0].site_b == 1);
  CHECK(build_cluster(spec).gpu_count() == 32);
}

TEST_CASE("leaving a node group out keeps its site's other groups") {
  ClusterSpec spec = cluster("mixed-a100-h100.json");
  leave_out(spec, {"dc-a/dgx-a100"});
  REQUIRE(spec.sites.size() == 1);
  REQUIRE(spec.sites[0].node_groups.size() == 1);
  CHECK(spec.sites[0].node_groups[0].gpu_type == "h100-sxm");
  CHECK(node_group_names(spec) == std::vector<std::string>{"dc-a/dgx-h100"});
}

TEST_CASE("bad leave_out entries name what the cluster has") {
  ClusterSpec spec = cluster("mixed-a100-h100.json");
  spec.source_file = "mixed.json";
  CHECK_THROWS_WITH_AS(leave_out(spec, {"dc-b"}),
                       "leave_out: got \"dc-b\"; expected a site or \"site/group\" of cluster "
                       "mixed.json: dc-a, dc-a/dgx-a100, dc-a/dgx-h100",
                       Error);
  CHECK_THROWS_WITH_AS(leave_out(spec, {"dc-a"}),
                       "leave_out: [dc-a] leaves no GPU of cluster mixed.json", Error);
  ClusterSpec paired = cluster("pair-matrix-3machine.json");
  paired.source_file = "pairs.json";
  CHECK_THROWS_WITH_AS(leave_out(paired, {"x"}),
                       "leave_out: cluster pairs.json has measured pair links, indexed by node; "
                       "leaving GPUs out would renumber them",
                       Error);
}

TEST_CASE("leave_out is a sweep key: a list of names, or one name") {
  CHECK(parse_point_job({{"leave_out", {"dc-c"}}}).variation.leave_out ==
        std::vector<std::string>{"dc-c"});
  CHECK(parse_point_job({{"leave_out", "dc-c/rtx4090"}}).variation.leave_out ==
        std::vector<std::string>{"dc-c/rtx4090"});
  CHECK_THROWS_WITH_AS(parse_point_job({{"leave_out", {1}}}),
                       "leave_out: got [1]; expected a list of sites or \"site/group\" names",
                       Error);
  CHECK_THROWS_WITH_AS(parse_point_job({{"leave_out", ""}}),
                       "leave_out: got \"\"; expected a list of sites or \"site/group\" names",
                       Error);
}

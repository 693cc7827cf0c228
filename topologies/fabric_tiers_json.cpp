#include "topologies/fabric_tiers_json.hpp"

#include <fmt/format.h>

#include <climits>

#include "base/units.hpp"
#include "topologies/link_ranges.hpp"

namespace hetsim {

std::vector<FabricTierSpec> read_fabric_tiers(const JsonInput& tiers) {
  if (tiers.array_size() == 0)
    tiers.fail("a non-empty array of switch tiers, leaves first (leave tiers out for one switch)");
  std::vector<FabricTierSpec> out;
  for (std::size_t t = 0; t < tiers.array_size(); ++t) {
    const JsonInput in = tiers.at(t);
    in.reject_unknown_keys(
        {"nodes_per_group", "rail_optimized", "oversubscription", "latency_us", "source"});
    FabricTierSpec tier;
    const long long nodes = in.positive_integer("nodes_per_group");
    if (nodes > INT_MAX)
      in.fail_member("nodes_per_group", fmt::format("an integer <= {}", INT_MAX));
    tier.nodes_per_group = static_cast<int>(nodes);
    // A group of a tier is made of whole groups of the tier below, so a route that leaves a group
    // has left the groups below it too.
    if (!out.empty() && tier.nodes_per_group % out.back().nodes_per_group != 0) {
      in.fail_member(
          "nodes_per_group",
          fmt::format("a multiple of tier {}'s nodes_per_group ({}), so that groups nest", t - 1,
                      out.back().nodes_per_group));
    }
    tier.rail_optimized = in.boolean_or("rail_optimized", false);
    // 1e308 used to pass here and end in a report that was not finite.
    tier.oversubscription = in.positive("oversubscription");
    if (tier.oversubscription > link_ranges::kMaxOversubscription)
      in.fail_member("oversubscription", fmt::format("a ratio of at most {:g}", link_ranges::kMaxOversubscription));
    tier.latency_s = in.between("latency_us", 0, link_ranges::kMaxLatencyS / units::kMicrosecond) *
                     units::kMicrosecond;
    out.push_back(tier);
  }
  return out;
}

}  // namespace hetsim

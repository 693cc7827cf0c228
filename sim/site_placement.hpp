#pragma once
// Bandwidth-aware placement of a tp x pp x dp plan on a cluster of several sites, in the manner of
// geo-distributed training systems: tensor-parallel groups inside a node, the data-parallel
// replicas of a pipeline rank inside one site, and the pipeline's activations on the wide-area
// links, along the order of sites whose WAN links carry that traffic fastest.
//
// On a cluster given as a measured pair-link matrix (topologies/README.md, "Pair links"), the
// same search orders its machines instead of its sites: the pair links are its wide-area links,
// and the order that puts the pipeline's boundaries on the fastest pairs wins (the pipeline
// half of the DT-FM scheduler's problem, Yuan et al., NeurIPS 2022, section 3).
//
// What it chooses: the order in which sites are filled. A candidate lays the GPUs out site by
// site (file order inside a site, so a node's GPUs stay consecutive) and Megatron's rank order runs
// over that sequence: pipeline rank r gets the r-th block of tp*dp GPUs. Each candidate is scored
// by the seconds its per-iteration traffic keeps the WAN links busy (bytes on each directed WAN
// link / the link's bandwidth, summed over links), ties broken by egress dollars, then by search
// order, the file order first, so a cluster whose file order is already best keeps the default
// placement exactly.
//
// What follows from the layout: whether some data-parallel group spans two sites depends only on
// the site sizes (it does iff some site's GPU count is not a multiple of tp*dp), never on the
// order; the order decides which WAN links the pipeline boundaries, and such groups, cross.
//
// What it does not do: it does not move layers or size stages to GPU speed (the layer balancer
// does that for the placement it is given); it gives every pipeline rank tp*dp GPUs; it counts
// bytes per link, without contention, latency or time-varying bandwidth (a link's nominal
// bandwidth_bytes_per_s); and it does not weigh the hop from the last pipeline rank back to the
// first that interleaved (vpp > 1) schedules add.
#include <cstddef>
#include <vector>

#include "sim/placement.hpp"
#include "topologies/cluster.hpp"

namespace hetsim {

// Bytes per training iteration that the search weighs, as each GPU sees them.
struct PlacementTraffic {
  // Tensor-parallel all-reduce payload per GPU of a group; a ring hop carries 2(n-1)/n of it.
  double tensor_parallel_bytes = 0;
  // Data-parallel gradient reduction payload per GPU, by pipeline rank (pp entries, or empty for
  // none); a ring hop over the dp replicas carries 2(n-1)/n of it.
  std::vector<double> gradient_bytes = {};
  // What each GPU sends to its counterpart across one pipeline boundary, forward activations and
  // backward gradients together, over all microbatches; half goes each way.
  double activation_bytes = 0;
};

// One placement's WAN use. Bytes are summed over the directed WAN links they cross (a message
// over two WAN links counts twice), as RunResult::bytes_wan counts them.
struct SiteOrderScore {
  // Sites (indexes into Cluster::sites()), or machines (node indexes) when the report says
  // `machines`, in the order they are filled: site_order[0] holds
  // pipeline rank 0. Empty for a placement scored by score_placement.
  std::vector<int> site_order = {};
  double wan_seconds = 0;  // sum over WAN links of bytes / bandwidth_bytes_per_s
  double wan_bytes = 0;
  double wan_usd = 0;  // sum over WAN links of bytes x egress_usd_per_byte
  double tensor_parallel_wan_bytes = 0;
  double gradient_wan_bytes = 0;
  double activation_wan_bytes = 0;
  // Whether any ring hop of a tensor-parallel group / data-parallel group crosses a WAN link
  // (whatever the bytes weighed on it).
  bool tensor_parallel_crosses_wan = false;
  bool data_parallel_crosses_wan = false;
};

struct SitePlacementReport {
  std::vector<SiteOrderScore> candidates;  // in search order; candidates[0] is the file order
  std::size_t chosen = 0;                  // index into candidates
  bool exhaustive = true;                  // false: too many sites for every order (see .cpp)
  // true: the cluster's machines are joined by measured pair links, and the orders are of its
  // machines (node indexes), not of its sites.
  bool machines = false;
};

// Places a tp x pp x dp plan (tp*pp*dp must be the cluster's GPU count) by the search above.
// Returns the default placement (empty order) when the file order scores best. Throws PlanError
// when the sizes do not multiply to the GPU count, when tp does not divide the GPUs of every node
// (a tensor-parallel group must sit inside one node), or when the traffic is malformed.
Placement place_across_sites(const Cluster& cluster, int tp, int pp, int dp,
                             const PlacementTraffic& traffic,
                             SitePlacementReport* report = nullptr);

// Scores any placement (the default one, say) exactly as the search scores its candidates.
SiteOrderScore score_placement(const Cluster& cluster, const Placement& placement,
                               const PlacementTraffic& traffic);

}  // namespace hetsim

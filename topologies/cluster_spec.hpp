#pragma once
// A cluster described in plain values (SI units), between the JSON file and the Cluster object.
// load_cluster() fills one from a file after checking every field; tests and tools may also fill
// one by hand and call build_cluster() to get a Cluster without writing a file.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

// One direction of a link: bytes per second and seconds.
struct LinkFigures {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

struct NodeGroupSpec {
  std::string name;
  int count = 0;            // nodes in the group
  std::string gpu_type;     // key into the GPU catalog
  int gpus_per_node = 0;
  LinkFigures intra_node;   // per GPU per direction; latency_s is the whole GPU-to-GPU latency
  LinkFigures nic;          // per GPU per direction; latency_s is the NIC share of a route
  std::string profile;      // calibration profile of these GPUs (path), empty: none
};

// One switch tier above the nodes of a site (topologies/README.md, "Switch tiers"). Nodes are
// cut into groups of `nodes_per_group` consecutive nodes of the site; a route between nodes of
// different groups leaves its group through the group's uplink and enters the other group
// through its downlink, each carrying the group's injection bandwidth (its nodes' NICs) divided
// by `oversubscription`, shared by every flow that crosses it.
struct FabricTierSpec {
  int nodes_per_group = 1;
  // Rail-optimised: NIC k of every node of a group sits on the group's leaf for rail k, so only
  // same-rail traffic stays inside the group; the group has one uplink per rail, carrying that
  // rail's NICs over the ratio.
  bool rail_optimized = false;
  double oversubscription = 1;
  double latency_s = 0;  // added once to a route that leaves a group of this tier
};

struct SiteSpec {
  std::string name;
  double fabric_latency_s = 0;  // the site switch fabric, crossed once by an inter-node route
  // Node bandwidth into the fabric over what the fabric carries out of a node: 1 = non-blocking;
  // r > 1 gives every node an uplink and a downlink of gpus_per_node * nic / r.
  double oversubscription = 1;
  std::vector<NodeGroupSpec> node_groups;
  // Switch tiers from the leaves up; groups nest (each tier's nodes_per_group a multiple of the
  // one below). Empty: one switch joins the site's nodes.
  std::vector<FabricTierSpec> tiers = {};
};

// Measured links between pairs of machines (nodes), which replace the fabric and WAN route
// between them: `figures[i][j]` is the link from nodes[i] to nodes[j] (per direction; latency
// one-way). Unused on the diagonal.
struct PairLinksSpec {
  std::vector<int> nodes;  // global node indexes, file order
  std::vector<std::vector<LinkFigures>> figures;
};

struct WanLinkSpec {
  int site_a = 0;  // indexes into ClusterSpec::sites
  int site_b = 0;
  LinkFigures figures;             // per direction; latency_s one-way
  double egress_usd_per_byte = 0;  // charged on each byte that crosses the link
  std::vector<BandwidthPoint> bandwidth_trace = {};  // time-varying bandwidth; empty = constant
};

// The message WAN routes are chosen for when the cluster file names none: one microbatch's
// activations between pipeline stages, s * b * h values in bf16 (Narayanan et al., SC'21), for
// Llama-3-70B (h = 8192) at seq 4096 and micro-batch 1: 4096 * 8192 * 2 B = 64 MiB. A route is
// chosen once per pair of sites, not per message.
inline constexpr double kDefaultWanRouteMessageBytes = 64.0 * 1024 * 1024;

// The name build_cluster() gives node `k` of a node group: "site/group<k>", e.g. "dc-a/dgx3".
inline std::string node_name_in_group(const std::string& site, const std::string& group, int k) {
  return site + "/" + group + std::to_string(k);
}

struct ClusterSpec {
  std::string name;
  std::string description;
  std::string source_file;  // "" when built in memory
  std::vector<SiteSpec> sites;
  std::vector<WanLinkSpec> wan_links;
  PairLinksSpec pair_links;  // empty: none
  // The file's own GPU types ("gpu_types", topologies/README.md) as written: an object of type
  // names to their figures, which GpuCatalog::with_types reads; node groups may name them.
  nlohmann::json gpu_types = nlohmann::json::object();
  // Between sites, the chain of WAN links that carries one message of this size soonest
  // (latency + bytes / bottleneck bandwidth) is the route.
  double wan_route_message_bytes = kDefaultWanRouteMessageBytes;
};

// Builds the fabric graph and links. Throws Error for a spec that cannot form a cluster (no
// sites, an empty site, a WAN link naming a site out of range, sites with no WAN path between
// them); load_cluster() reports those as InputErrors before getting here.
Cluster build_cluster(const ClusterSpec& spec);

}  // namespace hetsim

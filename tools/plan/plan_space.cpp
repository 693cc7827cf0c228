// The candidates `hetsim plan` considers: GPU subsets and the plans on each.
#include "tools/plan/plan_space.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "base/error.hpp"
#include "tools/sweep/cluster_subset.hpp"
#include "tools/sweep/point_job.hpp"

namespace hetsim::plan {

namespace {

// The node groups of `spec` with their sizes, in file order.
struct GroupInfo {
  std::string name;  // "site/group"
  int gpus = 0;
  int gpus_per_node = 0;
  std::string gpu_type;
  bool profiled = false;
};

std::vector<GroupInfo> groups_of(const ClusterSpec& spec) {
  std::vector<GroupInfo> groups;
  for (const SiteSpec& site : spec.sites)
    for (const NodeGroupSpec& group : site.node_groups)
      groups.push_back({site.name + "/" + group.name, group.count * group.gpus_per_node,
                        group.gpus_per_node, group.gpu_type, !group.profile.empty()});
  return groups;
}

// Whether the WAN links of `spec` join all its sites (build_cluster refuses a cluster whose
// sites cannot reach each other).
bool sites_connected(const ClusterSpec& spec) {
  const std::size_t n = spec.sites.size();
  std::vector<bool> reached(n, false);
  std::vector<std::size_t> stack = {0};
  reached[0] = true;
  while (!stack.empty()) {
    const std::size_t s = stack.back();
    stack.pop_back();
    for (const WanLinkSpec& link : spec.wan_links) {
      const std::size_t a = static_cast<std::size_t>(link.site_a);
      const std::size_t b = static_cast<std::size_t>(link.site_b);
      const std::size_t other = a == s ? b : (b == s ? a : n);
      if (other < n && !reached[other]) {
        reached[other] = true;
        stack.push_back(other);
      }
    }
  }
  return std::all_of(reached.begin(), reached.end(), [](bool r) { return r; });
}

std::vector<int> divisors_up_to(int n, int limit) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

std::vector<GpuSubset> gpu_subsets(const ClusterSpec& spec, const GpuCatalog& catalog) {
  const std::vector<GroupInfo> groups = groups_of(spec);
  const std::size_t n = groups.size();
  // Bit i of a mask set: group i is used. All groups first, then fewer.
  std::vector<unsigned> masks;
  const unsigned all = (1U << n) - 1;
  // Measured pair links are indexed by node: leaving GPUs out would renumber them, so such a
  // cluster is tried whole only.
  if (!spec.pair_links.nodes.empty()) {
    masks.push_back(all);
  } else if (n <= kMaxSubsetGroups) {
    for (unsigned mask = all; mask >= 1; --mask) masks.push_back(mask);
  } else {
    masks.push_back(all);
    for (std::size_t i = 0; i < n; ++i) masks.push_back(all & ~(1U << i));
  }
  std::vector<GpuSubset> subsets;
  for (const unsigned mask : masks) {
    GpuSubset subset;
    std::vector<std::string> left_texts;
    std::map<std::string, int> left_by_type;
    for (std::size_t i = 0; i < n; ++i) {
      const GroupInfo& group = groups[i];
      if ((mask & (1U << i)) == 0) {
        subset.left_out.push_back(group.name);
        left_texts.push_back(fmt::format("{} ({} x {})", group.name, group.gpus, group.gpu_type));
        continue;
      }
      subset.gpus += group.gpus;
      subset.min_gpus_per_node = subset.min_gpus_per_node == 0
                                     ? group.gpus_per_node
                                     : std::min(subset.min_gpus_per_node, group.gpus_per_node);
      if (std::find(subset.gpu_types.begin(), subset.gpu_types.end(), group.gpu_type) ==
          subset.gpu_types.end())
        subset.gpu_types.push_back(group.gpu_type);
      subset.usd_per_hour += group.gpus * catalog.at(group.gpu_type).usd_per_hour;
      subset.measured_profiles = subset.measured_profiles || group.profiled;
    }
    ClusterSpec reduced = spec;
    sweep::leave_out(reduced, subset.left_out);
    if (!sites_connected(reduced)) continue;
    subset.left_out_text = fmt::format("{}", fmt::join(left_texts, ", "));
    subset.sites = static_cast<int>(reduced.sites.size());
    subsets.push_back(std::move(subset));
  }
  return subsets;
}

nlohmann::json PlanCandidate::point(const PlanSpaceOptions& options,
                                    const GpuSubset& subset) const {
  nlohmann::json p{{"cluster", options.cluster_file},
                   {"model", options.model_file},
                   {"gbs", options.global_batch_size},
                   {"seq-length", options.seq_length},
                   {"tp", tp},
                   {"pp", pp},
                   {"vpp", vpp},
                   {"mbs", mbs},
                   {"schedule", schedule},
                   {"recompute-granularity", recompute},
                   {"zero-stage", zero_stage},
                   // What a practitioner turns on with Megatron-LM for any plan: FlashAttention,
                   // sequence parallelism beside tensor parallelism, and the gradient reduction
                   // overlapped with the last backward.
                   {"use-flash-attn", true},
                   {"overlap-grad-reduce", true}};
  if (tp > 1) p["sequence-parallel"] = true;
  if (cp > 1) p["cp"] = cp;
  if (ep > 1) p["ep"] = ep;
  if (offload_fraction > 0) p["offload-fraction"] = offload_fraction;
  if (balance_layers) p["balance-layers"] = true;
  if (placement != "megatron") p["placement"] = placement;
  if (!subset.left_out.empty()) p[sweep::kLeaveOutKey] = subset.left_out;
  return p;
}

std::string PlanCandidate::text() const {
  std::string text = fmt::format("tp{}", tp);
  if (cp > 1) text += fmt::format(" cp{}", cp);
  text += fmt::format(" pp{} dp{}", pp, dp);
  if (ep > 1) text += fmt::format(" ep{}", ep);
  if (vpp > 1) text += fmt::format(" vpp{}", vpp);
  text += fmt::format(" mbs{} {} rc={} zero{}", mbs, pp > 1 ? schedule : "no-pipeline", recompute,
                      zero_stage);
  if (offload_fraction > 0) text += fmt::format(" offload{}", offload_fraction);
  if (balance_layers) text += " balanced";
  if (placement != "megatron") text += " " + placement;
  return text;
}

std::vector<PlanCandidate> enumerate_candidates(const TransformerConfig& model,
                                                const std::vector<GpuSubset>& subsets,
                                                const PlanSpaceOptions& options) {
  if (options.global_batch_size < 1)
    throw Error(
        fmt::format("--gbs: got {}; expected a global batch size >= 1", options.global_batch_size));
  if (options.max_vpp < 2 || options.max_vpp > kMaxVirtualStages)
    throw Error(fmt::format("--max-vpp: got {}; expected 2 to {} virtual stages per rank",
                            options.max_vpp, kMaxVirtualStages));
  const std::vector<int> mbs_choices =
      options.wide ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1, 2, 4};
  std::vector<std::string> schedules =
      options.wide ? std::vector<std::string>{"1f1b", "interleaved", "zb-h1", "gpipe", "zb-h2"}
                   : std::vector<std::string>{"1f1b", "interleaved", "zb-h1"};
  // DualPipe and DualPipeV for MoE models, whose overlapped pairs hide the expert all-to-alls
  // (DeepSeek-V3); DualPipeV holds one copy of the parameters where DualPipe holds two.
  if (model.is_moe()) {
    schedules.push_back("dualpipe");
    schedules.push_back("dualpipev");
  }
  const std::vector<int> zero_stages =
      options.wide ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 1};
  const std::vector<double> offloads =
      options.wide ? std::vector<double>{0, 0.5, 1} : std::vector<double>{0};
  const std::vector<std::string> recomputes = {"none", "selective", "full"};
  // Context parallelism on long sequences only (kContextParallelMinSeqLength), on models whose
  // attention sees the whole sequence (the ring does not model sliding windows).
  std::vector<int> cps = {1};
  if (options.seq_length >= kContextParallelMinSeqLength &&
      model.attended_keys(options.seq_length) >= options.seq_length)
    for (const int cp : {2, 4})
      if (options.seq_length % (2 * cp) == 0) cps.push_back(cp);
  std::vector<PlanCandidate> out;
  for (std::size_t s = 0; s < subsets.size(); ++s) {
    const GpuSubset& subset = subsets[s];
    // Two sites have one boundary whichever comes first; the site order matters from three on.
    const std::vector<std::string> placements =
        subset.sites > 2 ? std::vector<std::string>{"megatron", "site-aware"}
                         : std::vector<std::string>{"megatron"};
    for (const int tp : divisors_up_to(subset.min_gpus_per_node, subset.min_gpus_per_node)) {
      if (model.num_heads % tp != 0 || model.num_kv_heads % tp != 0) continue;
      for (const int cp : cps) {
        if (subset.min_gpus_per_node % (tp * cp) != 0) continue;  // the ring stays in a node
        for (const int pp : divisors_up_to(model.num_layers, subset.gpus / (tp * cp))) {
          if (subset.gpus % (tp * cp * pp) != 0) continue;
          const int dp = subset.gpus / (tp * cp * pp);
          // MoE models: experts over 1, 2, 4 or 8 data-parallel replicas (dividing the experts and
          // dp; run refuses ep with context parallelism).
          std::vector<int> eps = {1};
          for (const int ep : {2, 4, 8})
            if (model.is_moe() && cp == 1 && model.num_experts % ep == 0 && dp % ep == 0) eps.push_back(ep);
          for (const int ep : eps)
          for (const int mbs : mbs_choices) {
            if (options.global_batch_size % (mbs * dp) != 0) continue;
            const int m = options.global_batch_size / (mbs * dp);
            for (const std::string& schedule : schedules) {
              if (pp == 1 && schedule != "1f1b") continue;  // no pipeline: the schedule is moot
              std::vector<int> vpps = {1};
              if (schedule == "interleaved") {
                if (pp == 1 || m % pp != 0) continue;
                vpps.clear();
                for (int v = 2; v <= std::min(options.max_vpp, model.num_layers / pp); ++v)
                  if ((model.num_layers / pp) % v == 0) vpps.push_back(v);
              }
              if (schedule == "zb-h2" && m < 2 * pp) continue;
              if (schedule == "dualpipe") {
                // Two directions over an even number of ranks, two chunks a rank, m >= 2p and even.
                if (pp < 2 || pp % 2 != 0 || m < 2 * pp || m % 2 != 0 || model.num_layers % (2 * pp) != 0)
                  continue;
                vpps = {2};
              }
              if (schedule == "dualpipev") {
                // One V over the ranks, two chunks a rank, m >= 2p (deepseek-ai/DualPipe, dualpipev.py).
                if (pp < 2 || m < 2 * pp || model.num_layers % (2 * pp) != 0) continue;
                vpps = {2};
              }
              // The partitioner costs one chunk per rank on its own GPU type (--balance-layers).
              std::vector<bool> balances = {false};
              if (subset.gpu_types.size() > 1 && pp > 1 && vpps == std::vector<int>{1})
                balances.push_back(true);
              for (const int vpp : vpps)
                for (const std::string& recompute : recomputes)
                  for (const int zero : zero_stages) {
                    if (zero > 0 && dp * cp == 1) continue;  // ZeRO shards over dp x cp
                    for (const double offload : offloads) {
                      if (offload > 0 && recompute == "full") continue;  // little left to offload
                      for (const bool balance : balances)
                        for (const std::string& placement : placements) {
                          // The site-aware placement lays out tp x pp x dp only (run refuses cp).
                          if (cp > 1 && placement != "megatron") continue;
                          out.push_back({s, tp, cp, pp, dp, ep, vpp, mbs, schedule, recompute, zero,
                                         offload, balance, placement});
                        }
                    }
                  }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace hetsim::plan

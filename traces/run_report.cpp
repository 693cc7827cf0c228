#include "traces/run_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unordered_map>
#include <vector>

#include "base/units.hpp"
#include "models/precision.hpp"

namespace hetsim {

namespace {
double gib(double bytes) { return bytes / units::kGiB; }

// Assigned key by key: a 16k-GPU report holds 16k of these, and nlohmann's initializer-list form
// builds a two-element array per key before turning it into the object (2.75x the instructions).
nlohmann::json memory_json(const GpuMemory& m) {
  nlohmann::json j(nlohmann::json::value_t::object);
  j["gpu"] = m.gpu;
  j["gpu_type"] = m.gpu_type;
  j["static_gib"] = gib(m.static_bytes);
  j["activations_gib"] = gib(m.activation_bytes);
  j["need_gib"] = gib(m.peak_bytes());
  j["capacity_gib"] = gib(m.capacity_bytes);
  return j;
}

nlohmann::json counts_json(const SourceCounts& counts) {
  return {{"profile", counts.profile}, {"roofline", counts.roofline}};
}

// A run of consecutive GPU ids, first to last.
struct GpuRun {
  GpuId first = 0;
  GpuId last = 0;
};

std::string run_text(const GpuRun& r) {
  return r.first == r.last ? fmt::format("{}", r.first) : fmt::format("{}-{}", r.first, r.last);
}

// Runs of one length at one stride (a pipeline stage's GPUs when replicas interleave: one run
// per replica) are abbreviated from this many on, where "a, b, ..., z (n ranges, d apart)" gets
// shorter than the list.
constexpr std::size_t kAbbreviatedRuns = 5;

// "0-7, 16-23", with kAbbreviatedRuns or more runs of one length at one stride written as their
// first two, "..." and their last, with how many there are. Each run is looked at no more than
// kAbbreviatedRuns times: linear in the runs.
std::string runs_text(const std::vector<GpuRun>& runs) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < runs.size()) {
    std::size_t end = i + 1;
    if (end < runs.size()) {
      const GpuId length = runs[i].last - runs[i].first;
      const GpuId stride = runs[end].first - runs[i].first;
      while (end < runs.size() && runs[end].last - runs[end].first == length &&
             runs[end].first - runs[end - 1].first == stride)
        ++end;
      if (end - i >= kAbbreviatedRuns) {
        parts.push_back(fmt::format("{}, {}, ..., {} ({} ranges, {} apart)", run_text(runs[i]),
                                    run_text(runs[i + 1]), run_text(runs[end - 1]), end - i,
                                    stride));
        i = end;
        continue;
      }
    }
    parts.push_back(run_text(runs[i]));
    ++i;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The OUT OF MEMORY lines of the table: GPUs whose lines would read the same (GPU type, need and
// capacity as printed) share one, their ids as runs, in order of each group's first GPU. A GPU
// alone in its group reads "gpu 3 (h100-sxm) needs ...", as it always has. `oom` is sorted by GPU
// id (simulate_training sorts it), so each GPU extends its group's last run or starts one.
std::vector<std::string> out_of_memory_lines(const std::vector<GpuMemory>& oom) {
  struct Group {
    std::string type;
    std::string need;  // "297.1 GiB of 79.7 GiB"
    std::vector<GpuRun> runs;
  };
  std::vector<Group> groups;
  std::unordered_map<std::string, std::size_t> group_of;  // type and need -> index in groups
  std::size_t group = 0;
  const GpuMemory* previous = nullptr;
  for (const GpuMemory& m : oom) {
    // Neighbours usually hold the same figures (a stage's GPUs): only a change is formatted.
    if (previous == nullptr || m.gpu_type != previous->gpu_type ||
        m.peak_bytes() != previous->peak_bytes() || m.capacity_bytes != previous->capacity_bytes) {
      std::string need =
          fmt::format("{:.1f} GiB of {:.1f} GiB", gib(m.peak_bytes()), gib(m.capacity_bytes));
      const auto [it, added] = group_of.try_emplace(m.gpu_type + '\0' + need, groups.size());
      if (added) groups.push_back({m.gpu_type, std::move(need), {}});
      group = it->second;
    }
    previous = &m;
    std::vector<GpuRun>& runs = groups[group].runs;
    if (!runs.empty() && runs.back().last + 1 == m.gpu)
      runs.back().last = m.gpu;
    else
      runs.push_back({m.gpu, m.gpu});
  }
  std::vector<std::string> lines;
  for (const Group& g : groups) {
    const bool one = g.runs.size() == 1 && g.runs[0].first == g.runs[0].last;
    lines.push_back(fmt::format("{} {} ({}) {} {}", one ? "gpu" : "gpus", runs_text(g.runs), g.type,
                                one ? "needs" : "need", g.need));
  }
  return lines;
}

}  // namespace

nlohmann::json run_report_json(const RunResult& r, const RunContext& c) {
  nlohmann::json per_gpu = nlohmann::json::array();
  for (const GpuMemory& m : r.memory) per_gpu.push_back(memory_json(m));
  nlohmann::json oom = nlohmann::json::array();
  for (const GpuMemory& m : r.oom) oom.push_back(memory_json(m));
  nlohmann::json wan_links = nlohmann::json::array();
  for (const WanLinkTraffic& w : r.wan_links)
    wan_links.push_back({{"link", w.link}, {"bytes", w.bytes}, {"egress_usd", w.egress_usd}});
  const ParallelPlan& p = r.plan;
  nlohmann::json report = {
      {"cluster", c.cluster_file},
      {"model", c.model_file},
      {"gpus", c.gpus},
      {"plan",
       {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"vpp", p.vpp}, {"mbs", p.micro_batch_size},
        {"gbs", p.global_batch_size}, {"seq_length", p.seq_length},
        {"microbatches", p.microbatches()}, {"recompute", to_string(p.recompute)},
        {"sequence_parallel", p.sequence_parallel}, {"schedule", r.schedule},
        {"zb_auto_memory_limit", r.zb_auto_memory_limit},
        {"offload_fraction", r.offload_fraction},
        {"wan_compression", r.wan_compression},
        {"sync_every", r.sync_every},
        {"distributed_optimizer", p.distributed_optimizer},
        {"zero_stage", p.effective_zero_stage()},
        {"overlap_grad_reduce", r.overlap_grad_reduce},
        {"overlap_param_gather", r.overlap_param_gather},
        {"collectives", r.alpha_beta_collectives ? "alpha-beta" : "flow"},
        {"precision", precision_name(p)},
        {"grad_reduce_dtype", p.grads_in_fp32() ? "fp32" : to_string(p.dtype)},
        {"site_order", r.site_order},
        {"layers_per_stage", r.layers_per_stage}}},
      {"precision", precision_name(p)},
      {"iteration_time_s", r.iteration_time_s},
      {"pipeline_time_s", r.pipeline_time_s},
      {"gradient_reduce_s_per_rank", r.gradient_reduce_s_per_rank},
      {"gradient_reduce_exposed_s_per_rank", r.gradient_reduce_exposed_s_per_rank},
      {"parameter_gather_s_per_rank", r.parameter_gather_s_per_rank},
      {"tokens_per_s", r.tokens_per_s},
      {"model_flops_per_iteration", r.model_flops},
      {"mfu", r.mfu},
      {"bubble_fraction", r.bubble_fraction},
      {"bubble_fraction_per_rank", r.bubble_fraction_per_rank},
      {"peak_memory_gib", {{"max", gib(r.peak_memory_bytes)}, {"per_gpu", per_gpu}}},
      {"oom", oom},
      {"cost_usd",
       {{"per_iteration", r.cost_usd},
        {"gpu_per_iteration", r.gpu_usd},
        {"egress_per_iteration", r.egress_usd},
        {"per_million_tokens", r.cost_usd_per_million_tokens}}},
      {"energy_kwh", r.energy_kwh},
      {"cost_sources",
       {{"profiles", r.profiles},
        {"gemm", counts_json(r.cost_sources.gemm)},
        {"attention", counts_json(r.cost_sources.attention)},
        {"memory_bound", counts_json(r.cost_sources.memory_bound)},
        {"tp_collective", counts_json(r.cost_sources.tp_collective)}}},
      {"offloaded_gib_per_iteration", gib(r.offloaded_bytes)},
      {"link_bytes_per_iteration",
       {{"intra_node", r.bytes_intra_node}, {"nic", r.bytes_nic}, {"wan", r.bytes_wan}}},
      {"wan_links", wan_links},
      {"events", r.events},
      {"transfers", r.transfers},
      {"wall_s", c.wall_s},
  };
  // Context parallelism appears only when used, so that cp 1 reports stay as they were.
  if (p.cp > 1) {
    report["plan"]["cp"] = p.cp;
    report["context_parallel"] = {{"exposed_s_per_rank", r.context_parallel_exposed_s_per_rank},
                                  {"bytes_per_iteration", r.context_parallel_bytes}};
  }
  // So does expert parallelism.
  if (p.ep > 1) report["plan"]["ep"] = p.ep;
  // And Megatron-LM's older backward (without its asynchronous TP all-reduce or its
  // gradient-accumulation fusion).
  if (!p.async_tp_allreduce) report["plan"]["async_tp_allreduce"] = false;
  if (!p.gradient_accumulation_fusion) report["plan"]["gradient_accumulation_fusion"] = false;
  if (!c.ignored_config_fields.empty()) report["ignored_config_fields"] = c.ignored_config_fields;
  if (r.tied_embedding_ranks[0] >= 0)
    report["tied_embedding_all_reduce"] = {
        {"s", r.tied_embedding_reduce_s},
        {"pp_ranks", {r.tied_embedding_ranks[0], r.tied_embedding_ranks[1]}},
        {"bytes_per_gpu", r.tied_embedding_bytes_per_gpu}};
  if (!r.mirrored_copy_ranks.empty())
    report["mirrored_copies_all_reduce"] = {{"s", r.mirrored_copy_reduce_s},
                                            {"pp_rank_pairs", r.mirrored_copy_ranks},
                                            {"bytes_per_gpu", r.mirrored_copy_bytes_per_gpu}};
  return report;
}

std::string run_report_table(const RunResult& r, const RunContext& c) {
  const ParallelPlan& p = r.plan;
  std::string out;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<28} {}\n", label, value);
  };
  out += fmt::format("hetsim run: {} on {} ({} GPUs)\n", c.model_name, c.cluster_file, c.gpus);
  for (const std::string& field : c.ignored_config_fields) line("config field not modelled", field);
  const std::string context = p.cp > 1 ? fmt::format(" x cp {}", p.cp) : "";
  const std::string experts = p.ep > 1 ? fmt::format(" (ep {})", p.ep) : "";
  line("plan", fmt::format("tp {}{} x pp {} x dp {}{}, vpp {}, mbs {}, gbs {}, seq {}, {} microbatches",
                           p.tp, context, p.pp, p.dp, experts, p.vpp, p.micro_batch_size, p.global_batch_size,
                           p.seq_length, p.microbatches()));
  if (!r.site_order.empty()) line("site order (site-aware)", fmt::format("{}", fmt::join(r.site_order, " -> ")));
  const std::string zb_limit =
      r.zb_auto_memory_limit > 0
          ? fmt::format(" (activations of {} microbatches per rank)", r.zb_auto_memory_limit)
          : "";
  line("schedule / recompute", fmt::format("{}{} / {}", r.schedule, zb_limit, to_string(p.recompute)));
  line("precision", fmt::format("{} (gradients reduced in {}; MFU against the {} peak)", precision_name(p),
                                p.grads_in_fp32() ? "fp32" : to_string(p.dtype),
                                to_string(linear_gemm_dtype(p))));
  if (!p.async_tp_allreduce)
    line("tp backward", "input-gradient all-reduces waited for after each layer's backward (no async all-reduce)");
  if (!p.gradient_accumulation_fusion)
    line("weight gradients", "written by the wgrad, added into the main grads by a kernel per weight (no fusion)");
  line("iteration time", fmt::format("{:.4f} s (pipeline {:.4f} s)", r.iteration_time_s, r.pipeline_time_s));
  std::string reduce;
  for (std::size_t i = 0; i < r.gradient_reduce_s_per_rank.size(); ++i)
    reduce += fmt::format("{:.4f}/{:.4f} ", r.gradient_reduce_s_per_rank[i], r.gradient_reduce_exposed_s_per_rank[i]);
  line("dp reduction s (ran/exposed)", fmt::format("{}({}, {})", reduce,
                                                    r.overlap_grad_reduce ? "overlapped buckets" : "after the backward",
                                                    r.alpha_beta_collectives ? "alpha-beta" : "flows"));
  if (r.tied_embedding_ranks[0] >= 0)
    line("embedding all-reduce", fmt::format("{:.4f} s (tied embeddings: pp ranks {} and {}, {:.3f} GB per GPU)",
                                             r.tied_embedding_reduce_s, r.tied_embedding_ranks[0],
                                             r.tied_embedding_ranks[1], r.tied_embedding_bytes_per_gpu / 1e9));
  if (!r.mirrored_copy_ranks.empty()) {
    std::string pairs;
    for (const auto& [a, b] : r.mirrored_copy_ranks) pairs += fmt::format("{}{}-{}", pairs.empty() ? "" : ", ", a, b);
    line("copies' all-reduce", fmt::format("{:.4f} s (two copies of the parameters: pp ranks {}; up to {:.3f} GB per GPU)",
                                            r.mirrored_copy_reduce_s, pairs, r.mirrored_copy_bytes_per_gpu / 1e9));
  }
  if ((p.effective_zero_stage() == 3 || r.overlap_param_gather) && p.data_parallel_with_context() > 1) {
    std::string gathers;
    for (double s : r.parameter_gather_s_per_rank) gathers += fmt::format("{:.4f} ", s);
    line("weight gathers s", gathers + (r.overlap_param_gather ? "(before each chunk's first forward)"
                                                               : "(ZeRO-3, before each forward and backward)"));
  }
  if (p.cp > 1) {
    std::string exposed;
    for (double s : r.context_parallel_exposed_s_per_rank) exposed += fmt::format("{:.4f} ", s);
    line("cp ring exposed s", fmt::format("{}(per pp rank; {:.1f} GiB sent round the rings)", exposed,
                                          gib(r.context_parallel_bytes)));
  }
  line("throughput", fmt::format("{:.0f} tokens/s", r.tokens_per_s));
  line("MFU", fmt::format("{:.1f} %", 100 * r.mfu));
  line("bubble fraction", fmt::format("{:.1f} % (idle share of the pipeline time)", 100 * r.bubble_fraction));
  std::string per_rank;
  for (double b : r.bubble_fraction_per_rank) per_rank += fmt::format("{:.1f} ", 100 * b);
  line("  per pp rank (%)", per_rank);
  line("peak memory", fmt::format("{:.1f} GiB (max over GPUs)", gib(r.peak_memory_bytes)));
  if (r.oom.empty()) {
    line("out of memory", "none");
  } else {
    for (const std::string& text : out_of_memory_lines(r.oom)) line("OUT OF MEMORY", text);
  }
  line("cost", fmt::format("${:.4f} per iteration (GPUs ${:.4f}, WAN egress ${:.4f}), ${:.3f} per "
                           "million tokens",
                           r.cost_usd, r.gpu_usd, r.egress_usd, r.cost_usd_per_million_tokens));
  line("energy", fmt::format("{:.4f} kWh per iteration", r.energy_kwh));
  line("bytes on links", fmt::format("intra-node {:.3g} GB, NIC {:.3g} GB, WAN {:.3g} GB",
                                     r.bytes_intra_node / units::kGB, r.bytes_nic / units::kGB,
                                     r.bytes_wan / units::kGB));
  for (const WanLinkTraffic& w : r.wan_links)
    line("  WAN " + w.link, fmt::format("{:.3g} GB, ${:.4f}", w.bytes / units::kGB, w.egress_usd));
  const auto sources = [](const SourceCounts& s) { return fmt::format("{}/{}", s.profile, s.total()); };
  line("op costs from profile", r.profiles.empty()
                                    ? std::string("none (roofline model)")
                                    : fmt::format("GEMM {}, attention {}, memory-bound {}, TP collectives {} "
                                                  "(the rest from the roofline)",
                                                  sources(r.cost_sources.gemm), sources(r.cost_sources.attention),
                                                  sources(r.cost_sources.memory_bound),
                                                  sources(r.cost_sources.tp_collective)));
  line("events", fmt::format("{} ({:.3f} s wall)", r.events, c.wall_s));
  if (!c.trace_file.empty()) line("trace", c.trace_file + " (open in ui.perfetto.dev)");
  return out;
}

}  // namespace hetsim

#include "sim/serving/serving_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "base/units.hpp"

namespace hetsim::serving {

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  p.count = static_cast<long>(values.size());
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  const auto rank = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(values.size())));
    return values[std::max<std::size_t>(k, 1) - 1];
  };
  p.p50 = rank(50);
  p.p90 = rank(90);
  p.p99 = rank(99);
  double sum = 0;
  for (const double v : values) sum += v;
  p.mean = sum / static_cast<double>(values.size());
  return p;
}

ServingMetrics serving_metrics(const ServingResult& result, const Cluster& cluster, const GpuCatalog& catalog,
                               const ServingSlo& slo) {
  ServingMetrics m;
  m.requests = static_cast<long>(result.requests.size());
  m.makespan_s = result.makespan_s;
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(result.requests.size());
  e2e.reserve(result.requests.size());
  double prompt_tokens = 0, output_tokens = 0;
  for (const RequestOutcome& r : result.requests) {
    const double first = r.first_token_s - r.arrival_s;
    ttft.push_back(first);
    e2e.push_back(r.finish_s - r.arrival_s);
    double per_token = 0;
    if (r.output_tokens > 1) {
      per_token = (r.finish_s - r.first_token_s) / (r.output_tokens - 1);
      tpot.push_back(per_token);
    }
    prompt_tokens += r.prompt_tokens;
    output_tokens += r.output_tokens;
    const bool ttft_ok = slo.ttft_s <= 0 || first <= slo.ttft_s;
    const bool tpot_ok = slo.tpot_s <= 0 || per_token <= slo.tpot_s;
    if (ttft_ok && tpot_ok) ++m.slo_met;
  }
  m.ttft = percentiles(std::move(ttft));
  m.tpot = percentiles(std::move(tpot));
  m.e2e = percentiles(std::move(e2e));
  // A run of one single-token request on a free replica still takes its prefill: makespan > 0.
  const double span = result.makespan_s;
  m.requests_per_s = static_cast<double>(m.requests) / span;
  m.output_tokens_per_s = output_tokens / span;
  m.total_tokens_per_s = (prompt_tokens + output_tokens) / span;
  m.goodput_requests_per_s = static_cast<double>(m.slo_met) / span;
  double block_seconds = 0, blocks = 0, joules = 0;
  for (const ReplicaStats& rep : result.replicas) {
    m.kv_peak_fraction = std::max(m.kv_peak_fraction, static_cast<double>(rep.peak_blocks_used) / rep.kv_blocks);
    block_seconds += rep.block_seconds;
    blocks += static_cast<double>(rep.kv_blocks);
    m.preemptions += rep.preemptions;
    m.speculation.add(rep.speculation);
    const std::size_t per_stage = rep.gpus.size() / rep.stage_busy_s.size();
    for (std::size_t i = 0; i < rep.gpus.size(); ++i) {
      const GpuSpec& spec = catalog.at(cluster.gpu(rep.gpus[i]).gpu_type);
      const double busy = rep.stage_busy_s[i / per_stage];
      m.gpu_usd += spec.usd_per_hour * span / units::kSecondsPerHour;
      joules += busy * spec.max_power_w + std::max(0.0, span - busy) * spec.idle_power_w;
      ++m.gpus;
    }
  }
  if (m.speculation.verifications > 0) {
    m.acceptance_observed = static_cast<double>(m.speculation.accepted) / static_cast<double>(m.speculation.proposed);
    m.tokens_per_step = static_cast<double>(m.speculation.emitted) / static_cast<double>(m.speculation.verifications);
    m.expected_tokens_per_step = m.speculation.expected_emitted / static_cast<double>(m.speculation.verifications);
  }
  m.kv_mean_fraction = block_seconds / (blocks * span);
  m.egress_usd = result.kv_transfer_egress_usd;
  m.usd_per_million_output_tokens = (m.gpu_usd + m.egress_usd) / output_tokens * 1e6;
  m.energy_kwh = joules / 3.6e6;
  m.joules_per_output_token = joules / output_tokens;
  return m;
}

namespace {

nlohmann::json percentile_json(const Percentiles& p) {
  return {{"p50_ms", p.p50 * 1e3}, {"p90_ms", p.p90 * 1e3}, {"p99_ms", p.p99 * 1e3}, {"mean_ms", p.mean * 1e3},
          {"requests", p.count}};
}

}  // namespace

nlohmann::json serving_report_json(const ServingResult& result, const ServingMetrics& m, const ServingContext& c) {
  nlohmann::json replicas = nlohmann::json::array();
  for (const ReplicaStats& rep : result.replicas) {
    replicas.push_back({{"gpus", rep.gpus},
                        {"stage_gpu_types", rep.stage_gpu_types},
                        {"stage_layers", rep.stage_layers},
                        {"kv_blocks", rep.kv_blocks},
                        {"kv_bytes_per_token_per_gpu", rep.tightest_stage.kv_bytes_per_token},
                        {"weights_bytes_per_gpu", rep.tightest_stage.weights_bytes},
                        {"peak_blocks_used", rep.peak_blocks_used},
                        {"requests", rep.requests},
                        {"iterations", rep.iterations},
                        {"preemptions", rep.preemptions},
                        {"busy_s", rep.busy_s}});
    if (result.spec_tokens > 0) replicas.back()["draft_busy_s"] = rep.draft_busy_s;
  }
  nlohmann::json slo = nlohmann::json::object();
  if (c.slo.ttft_s > 0) slo["ttft_ms"] = c.slo.ttft_s * 1e3;
  if (c.slo.tpot_s > 0) slo["tpot_ms"] = c.slo.tpot_s * 1e3;
  nlohmann::json report = {{"cluster", c.cluster_file},
          {"model", c.model_file},
          {"model_name", c.model_name},
          {"workload", c.workload},
          {"scheduler", c.scheduler},
          {"router", c.router},
          {"tp", c.tp},
          {"pp", c.pp},
          {"replicas", result.replicas.size()},
          {"prefill_replicas", result.prefill_replicas},
          {"kv_transfer_bytes", result.kv_transfer_bytes},
          {"egress_usd", m.egress_usd},
          {"gpus", m.gpus},
          {"max_batched_tokens", result.max_batched_tokens},
          {"requests", m.requests},
          {"makespan_s", m.makespan_s},
          {"ttft", percentile_json(m.ttft)},
          {"tpot", percentile_json(m.tpot)},
          {"e2e", percentile_json(m.e2e)},
          {"requests_per_s", m.requests_per_s},
          {"output_tokens_per_s", m.output_tokens_per_s},
          {"total_tokens_per_s", m.total_tokens_per_s},
          {"slo", slo},
          {"slo_met", m.slo_met},
          {"goodput_requests_per_s", m.goodput_requests_per_s},
          {"kv_cache_peak_fraction", m.kv_peak_fraction},
          {"kv_cache_mean_fraction", m.kv_mean_fraction},
          {"preemptions", m.preemptions},
          {"gpu_usd", m.gpu_usd},
          {"usd_per_million_output_tokens", m.usd_per_million_output_tokens},
          {"energy_kwh", m.energy_kwh},
          {"joules_per_output_token", m.joules_per_output_token},
          {"events", result.events},
          {"replica_details", replicas}};
  if (!result.reconfigurations.empty()) {
    nlohmann::json moves = nlohmann::json::array();
    for (const Reconfiguration& rc : result.reconfigurations)
      moves.push_back({{"replica", rc.replica},
                       {"from_layers", rc.from_layers},
                       {"to_layers", rc.to_layers},
                       {"requested_s", rc.requested_s},
                       {"drained_s", rc.drained_s},
                       {"transfer_s", rc.transfer_s},
                       {"pause_s", rc.pause_s()},
                       {"layers_moved", rc.layers_moved},
                       {"kv_blocks", rc.kv_blocks},
                       {"weights_bytes", rc.weights_bytes},
                       {"kv_bytes", rc.kv_bytes}});
    report["reconfigurations"] = moves;
  }
  if (result.spec_tokens > 0)
    report["speculative"] = {{"draft_model", result.draft_model},
                             {"spec_tokens", result.spec_tokens},
                             {"acceptance_rate", result.acceptance_rate},
                             {"acceptance_observed", m.acceptance_observed},
                             {"tokens_per_step", m.tokens_per_step},
                             {"expected_tokens_per_step", m.expected_tokens_per_step},
                             {"verification_steps", m.speculation.verifications},
                             {"draft_tokens_proposed", m.speculation.proposed},
                             {"draft_tokens_accepted", m.speculation.accepted}};
  return report;
}

std::string serving_report_table(const ServingResult& result, const ServingMetrics& m, const ServingContext& c) {
  std::string out;
  const auto line = [&out](const std::string& text) { out += text + "\n"; };
  line(fmt::format("serve {} on {}: {} replicas of tp {} x pp {} ({} GPUs), scheduler {}, router {}",
                   c.model_name, c.cluster_file, result.replicas.size(), c.tp, c.pp, m.gpus, c.scheduler, c.router));
  if (result.prefill_replicas > 0)
    line(fmt::format("disaggregated: replicas 0-{} prefill, the other {} decode; {:.3f} GB of KV cache sent",
                     result.prefill_replicas - 1, result.replicas.size() - result.prefill_replicas,
                     result.kv_transfer_bytes / 1e9));
  if (c.split_given)
    line(fmt::format("layers per stage: {}", fmt::join(result.replicas.front().stage_layers, ", ")));
  if (result.spec_tokens > 0)
    line(fmt::format("speculative decoding: draft {}, {} tokens per step, acceptance rate {:g}: {:.4f} accepted, "
                     "{:.3f} tokens per verification step (eq. 1 expects {:.3f})",
                     result.draft_model, result.spec_tokens, result.acceptance_rate, m.acceptance_observed,
                     m.tokens_per_step, m.expected_tokens_per_step));
  if (!result.reconfigurations.empty()) {
    double weights = 0, kv = 0, pause = 0, worst = 0;
    for (const Reconfiguration& rc : result.reconfigurations) {
      weights += rc.weights_bytes;
      kv += rc.kv_bytes;
      pause += rc.pause_s();
      worst = std::max(worst, rc.pause_s());
    }
    const Reconfiguration& first = result.reconfigurations.front();
    line(fmt::format("re-split at {:g} s: layers {} -> {} on {} replicas; {:.3f} GB of weights and {:.3f} GB of KV "
                     "cache moved; pause mean {:.3f} ms, max {:.3f} ms (drain, then transfer)",
                     first.requested_s, fmt::join(first.from_layers, ","), fmt::join(first.to_layers, ","),
                     result.reconfigurations.size(), weights / 1e9, kv / 1e9,
                     pause / static_cast<double>(result.reconfigurations.size()) * 1e3, worst * 1e3));
  }
  line(fmt::format("workload: {}; {} requests over {:.3f} s", c.workload, m.requests, m.makespan_s));
  line(fmt::format("{:<14}{:>12}{:>12}{:>12}{:>12}", "latency (ms)", "p50", "p90", "p99", "mean"));
  for (const auto& [name, p] : {std::pair{"TTFT", m.ttft}, std::pair{"TPOT", m.tpot}, std::pair{"E2E", m.e2e}})
    line(fmt::format("{:<14}{:>12.2f}{:>12.2f}{:>12.2f}{:>12.2f}", name, p.p50 * 1e3, p.p90 * 1e3, p.p99 * 1e3,
                     p.mean * 1e3));
  line(fmt::format("throughput     {:.3f} requests/s, {:.1f} output tokens/s, {:.1f} tokens/s in all",
                   m.requests_per_s, m.output_tokens_per_s, m.total_tokens_per_s));
  if (c.slo.ttft_s > 0 || c.slo.tpot_s > 0)
    line(fmt::format("goodput        {:.3f} requests/s ({} of {} within TTFT {} and TPOT {})", m.goodput_requests_per_s,
                     m.slo_met, m.requests, c.slo.ttft_s > 0 ? fmt::format("{:g} ms", c.slo.ttft_s * 1e3) : "any",
                     c.slo.tpot_s > 0 ? fmt::format("{:g} ms", c.slo.tpot_s * 1e3) : "any"));
  long blocks = 0;
  for (const ReplicaStats& rep : result.replicas) blocks += rep.kv_blocks;
  line(fmt::format("KV cache       {} blocks in all; peak {:.1f}%, mean {:.1f}% in use; {} preemptions", blocks,
                   100 * m.kv_peak_fraction, 100 * m.kv_mean_fraction, m.preemptions));
  line(fmt::format("cost           ${:.4f} of GPU time{}, ${:.3f} per million output tokens", m.gpu_usd,
                   m.egress_usd > 0 ? fmt::format(" and ${:.4f} of egress", m.egress_usd) : "",
                   m.usd_per_million_output_tokens));
  line(fmt::format("energy         {:.4f} kWh, {:.3f} J per output token (busy GPUs at board power)", m.energy_kwh,
                   m.joules_per_output_token));
  return out;
}

}  // namespace hetsim::serving

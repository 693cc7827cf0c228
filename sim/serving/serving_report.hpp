#pragma once
// The figures of a serving run: latency percentiles, throughput, goodput under SLOs, KV-cache
// use, preemptions, dollars and energy; as a table for people and as JSON for scripts.
#include <nlohmann/json.hpp>
#include <string>

#include "models/gpu_catalog.hpp"
#include "sim/serving/serving_run.hpp"
#include "topologies/cluster.hpp"

namespace hetsim::serving {

// Nearest-rank percentiles (the ceil(p/100 * n)-th smallest value) and the mean, in seconds.
struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
  long count = 0;
};
Percentiles percentiles(std::vector<double> values);

// Service-level objectives; 0 leaves one out.
struct ServingSlo {
  double ttft_s = 0;
  double tpot_s = 0;
};

struct ServingMetrics {
  long requests = 0;
  double makespan_s = 0;
  Percentiles ttft;  // arrival to first output token
  Percentiles tpot;  // (finish - first token) / (output tokens - 1), requests of 2+ output tokens
  Percentiles e2e;   // arrival to last output token
  double requests_per_s = 0;
  double output_tokens_per_s = 0;
  double total_tokens_per_s = 0;  // prompt and output tokens
  long slo_met = 0;               // requests meeting every SLO given
  double goodput_requests_per_s = 0;
  double kv_peak_fraction = 0;  // the fullest replica's peak share of its blocks
  double kv_mean_fraction = 0;  // blocks in use over the run, time-weighted, over all blocks
  long preemptions = 0;
  int gpus = 0;
  double gpu_usd = 0;  // GPU-hours of the replicas' GPUs over the makespan at list price
  double egress_usd = 0;  // disaggregated serving: KV caches sent over priced (WAN) links
  double usd_per_million_output_tokens = 0;  // GPU time and egress
  // Busy GPUs at their board power limit, idle ones at idle power: an upper bound, as `run`'s.
  double energy_kwh = 0;
  double joules_per_output_token = 0;
  // Speculative decoding, over every replica's verification steps.
  SpeculationStats speculation;
  double acceptance_observed = 0;   // accepted / proposed draft tokens
  double tokens_per_step = 0;       // output tokens per verification step of a sequence
  double expected_tokens_per_step = 0;  // eq. 1 at each of those steps' proposals, averaged
};

ServingMetrics serving_metrics(const ServingResult& result, const Cluster& cluster, const GpuCatalog& catalog,
                               const ServingSlo& slo);

// What the report says about its inputs.
struct ServingContext {
  std::string cluster_file, model_file, model_name, workload, scheduler, router;
  int tp = 1, pp = 1;
  ServingSlo slo;
  bool split_given = false;  // --layers-per-stage: the table names each stage's layers
};

nlohmann::json serving_report_json(const ServingResult& result, const ServingMetrics& metrics,
                                   const ServingContext& context);
std::string serving_report_table(const ServingResult& result, const ServingMetrics& metrics,
                                 const ServingContext& context);

}  // namespace hetsim::serving

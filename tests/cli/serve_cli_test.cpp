// `hetsim serve`: per scheduler, one request on one replica reports TTFT = the prefill iteration
// and TPOT = the mean decode iteration of the cost model; identical runs give identical reports
// and traces that Perfetto's importer checks accept; bad options fail with one line naming them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_test_support.hpp"
#include "models/gpu_catalog.hpp"
#include "models/transformer_config.hpp"
#include "sim/serving/batch_cost.hpp"

using hetsim::test::read_json;
using hetsim::test::shell;
using hetsim::test::slurp;

namespace {

const std::string kBin = HETSIM_BINARY;
const std::string kRoot = HETSIM_SOURCE_DIR;

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-serve-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST_CASE("serve, one request on one A100: TTFT = prefill time, TPOT = decode step time, per scheduler") {
  using namespace hetsim;
  const GpuCatalog catalog = GpuCatalog::load(kRoot + "/models/gpus");
  const TransformerConfig model = load_transformer_config(kRoot + "/models/configs/llama-3-8b.json");
  serving::StageHardware hw;
  hw.gpu = &catalog.at("a100-80gb");
  const serving::ReplicaCost cost(model, Dtype::kBf16, 1, {hw});
  serving::IterationWork prefill;
  prefill.add_prefill(300, 0, true);
  double decodes = 0;
  for (long k = 0; k < 3; ++k) {
    serving::IterationWork w;
    w.add_decode(300 + k);
    decodes += cost.iteration_seconds(w);
  }
  for (const char* scheduler : {"vllm", "sarathi", "orca"}) {
    const auto out = scratch(std::string("one_") + scheduler + ".json");
    REQUIRE(shell(kBin + " serve --replicas 1 --requests 1 --prompt-tokens 300 --output-tokens 4 --scheduler " +
                  scheduler + " --json > " + out.string()) == 0);
    const auto report = read_json(out);
    INFO(scheduler << ": TTFT " << report["ttft"]["p50_ms"] << " ms, expected " << cost.iteration_seconds(prefill) * 1e3
                   << "; TPOT " << report["tpot"]["p50_ms"] << " ms, expected " << decodes / 3 * 1e3);
    CHECK(report["ttft"]["p50_ms"].get<double>() == doctest::Approx(cost.iteration_seconds(prefill) * 1e3).epsilon(1e-12));
    CHECK(report["tpot"]["p50_ms"].get<double>() == doctest::Approx(decodes / 3 * 1e3).epsilon(1e-12));
    CHECK(report["scheduler"] == scheduler);
    CHECK(report["preemptions"] == 0);
  }
}

TEST_CASE("serve on a heterogeneous three-site cluster: identical runs, valid trace, both routers") {
  const std::string cluster = kRoot + "/topologies/clusters/three-site.json";
  for (const char* name : {"a", "b"}) {
    REQUIRE(shell(kBin + " serve --cluster " + cluster + " --tp 2 --router least-outstanding --scheduler sarathi " +
                  "--rate 40 --requests 120 --prompt-tokens 64:1024 --output-tokens 8:64 --slo-ttft-ms 500 " +
                  "--slo-tpot-ms 100 --json --trace " + scratch(std::string(name) + ".trace.json").string() + " > " +
                  scratch(std::string(name) + ".json").string()) == 0);
  }
  CHECK(slurp(scratch("a.trace.json")) == slurp(scratch("b.trace.json")));
  CHECK(slurp(scratch("a.json")) == slurp(scratch("b.json")));
  CHECK(shell(kBin + " validate " + scratch("a.trace.json").string() + " > /dev/null") == 0);
  const auto report = read_json(scratch("a.json"));
  CHECK(report["requests"] == 120);
  CHECK(report["ttft"]["p50_ms"].get<double>() <= report["ttft"]["p99_ms"].get<double>());
  CHECK(report["slo_met"].get<long>() <= 120);
  CHECK(report["usd_per_million_output_tokens"].get<double>() > 0);
  CHECK(report["energy_kwh"].get<double>() > 0);
  // Least-outstanding fills the lowest-numbered idle replica first, and spreads once it is busy.
  long used = 0;
  for (const auto& replica : report["replica_details"]) used += replica["requests"].get<long>() > 0 ? 1 : 0;
  CHECK(report["replica_details"][0]["requests"].get<long>() > 0);
  CHECK(used > 1);
  REQUIRE(shell(kBin + " serve --cluster " + cluster + " --tp 2 --router round-robin --rate 40 --requests 120 " +
                "--json > " + scratch("rr.json").string()) == 0);
  // Round-robin deals the 120 requests in turn: the first 120 mod n replicas get one more.
  const auto round_robin = read_json(scratch("rr.json"));
  const long n = round_robin["replicas"].get<long>();
  for (long r = 0; r < n; ++r)
    CHECK(round_robin["replica_details"][r]["requests"].get<long>() == 120 / n + (r < 120 % n ? 1 : 0));
}

TEST_CASE("serve disaggregated across sites: prefill on dc-a's H100s, KV caches over the WAN to the decoders") {
  const auto out = scratch("disagg.json");
  const auto trace = scratch("disagg.trace.json");
  REQUIRE(shell(kBin + " serve --cluster " + kRoot + "/topologies/clusters/three-site.json --tp 2 --prefill-replicas 8 " +
                "--rate 20 --requests 100 --prompt-tokens 256 --output-tokens 2:32 --json --trace " + trace.string() +
                " > " + out.string()) == 0);
  const auto report = read_json(out);
  CHECK(report["prefill_replicas"] == 8);
  // 100 prompts of 256 tokens x 131,072 bytes of K and V per token (Llama-3-8B, bf16).
  CHECK(report["kv_transfer_bytes"].get<double>() == doctest::Approx(100 * 256 * 131072.0));
  CHECK(report["egress_usd"].get<double>() > 0);
  for (int r = 0; r < 8; ++r) CHECK(report["replica_details"][r]["requests"].get<long>() > 0);
  CHECK(shell(kBin + " validate " + trace.string() + " > /dev/null") == 0);
}

TEST_CASE("serve disaggregated: KV caches queued on a 10 Gbit/s WAN link end no sooner than it can carry them") {
  // dc-a prefills (replicas 0-7), replicas 16-23 decode in dc-c behind three-site.json's dc-a to
  // dc-c link of 10 Gbit/s (1.25 GB/s per direction). Every cache sent there crosses that link,
  // so the run lasts at least their bytes over its bandwidth: 4.3x the 10 s of arrivals here.
  // Costed alone on its route, each cache had the whole link and the run ended about when the
  // arrivals did.
  const auto out = scratch("disagg-wan.json");
  REQUIRE(shell(kBin + " serve --cluster " + kRoot + "/topologies/clusters/three-site.json --tp 2 --prefill-replicas 8 " +
                "--rate 40 --requests 400 --prompt-tokens 2048 --output-tokens 16 --json > " + out.string()) == 0);
  const auto report = read_json(out);
  long to_dc_c = 0;
  for (int r = 16; r < 24; ++r) to_dc_c += report["replica_details"][r]["requests"].get<long>();
  const double bytes = static_cast<double>(to_dc_c) * 2048 * 131072.0;  // Llama-3-8B, bf16: 128 KiB per token
  const double link_s = bytes / (10e9 / 8);
  MESSAGE(to_dc_c << " caches to dc-c need " << link_s << " s of the link; makespan "
                  << report["makespan_s"].get<double>() << " s");
  CHECK(to_dc_c > 150);
  CHECK(report["makespan_s"].get<double>() >= link_s);
}

TEST_CASE("serve refuses bad options with one line naming them") {
  const auto err = scratch("err.txt");
  const auto refuse = [&](const std::string& args, const std::string& expected) {
    CHECK(shell(kBin + " serve " + args + " > /dev/null 2> " + err.string()) == 1);
    const std::string text = slurp(err);
    INFO(text);
    CHECK(text.find(expected) != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  };
  refuse("--scheduler fifo", "command line: --scheduler: got fifo; expected one of vllm, sarathi, orca");
  refuse("--router random", "--router: got random; expected one of round-robin, least-outstanding");
  refuse("--prompt-tokens 10:x", "--prompt-tokens: got 10:x; expected token counts MIN[:MAX]");
  refuse("--output-tokens 9:3", "--output-tokens: got 9:3");
  refuse("--rate -2", "--rate: got -2");
  refuse("--arrival uniform", "--arrival: got uniform; expected poisson or gamma");
  refuse("--dtype fp8", "--dtype: got fp8; expected bf16 or fp16");
  refuse("--requests-csv " + kRoot + "/tests/serving/data/no_such.csv", "no_such.csv");
  refuse("--tp 16", "replicas of tp 16 x pp 1 need 16 GPUs; cluster dgx-a100-1node has 8");
  refuse("--model " + kRoot + "/models/configs/llama-3-70b.json", "leave no room for the KV cache");
  refuse("--slo-ttft-ms -1", "--slo-ttft-ms: got -1");
  refuse("--slo-ttft-ms inf", "--slo-ttft-ms: got inf; expected milliseconds in [0, 3.1536e10]");
  refuse("--slo-tpot-ms nan", "--slo-tpot-ms: got nan");
  refuse("--prefill-replicas 8", "--prefill-replicas 8 must leave at least one of the 8 replicas to decode");
  refuse("--replicas -1", "--replicas -1 must be 0 (all) or more");
  refuse("--gpu-memory-utilization 1.5", "--gpu-memory-utilization 1.5 must be in (0, 1]");
  refuse("--requests-csv " + kRoot + "/tests/serving/data/azure_sample.csv --tp 3",
         "tp 3 must divide the 32 attention heads");
  const std::string draft = " --draft-model " + kRoot + "/models/configs/llama-3.2-1b.json";
  refuse(draft + " --spec-tokens 0 --acceptance-rate 0.5", "--spec-tokens 0 must be at least 1 with a draft model");
  refuse(draft + " --spec-tokens -3 --acceptance-rate 0.5", "--spec-tokens -3 must be at least 1");
  refuse(draft + " --spec-tokens 4 --acceptance-rate 1.5", "--acceptance-rate 1.5 must be in [0, 1]");
  refuse(draft + " --spec-tokens 4 --acceptance-rate -0.1", "--acceptance-rate -0.1 must be in [0, 1]");
  refuse(" --draft-model " + kRoot + "/models/configs/llama-2-7b.json --spec-tokens 4 --acceptance-rate 0.5",
         "has a vocabulary of 32000 tokens, target meta-llama/Meta-Llama-3-8B one of 128256");
  refuse("--spec-tokens 4", "--spec-tokens: got 4; expected speculative decoding needs a draft model (--draft-model)");
  refuse("--acceptance-rate 0.5", "--acceptance-rate: got 0.5; expected speculative decoding needs a draft model");
  refuse("--pp 3 --layers-per-stage 10,14,9", "layers per stage 10,14,9 must give each of the 3 stages at least one "
                                              "layer and sum to the 32 layers");
  refuse("--pp 3 --layers-per-stage 16,16", "layers per stage 16,16 must give each of the 3 stages");
  refuse("--pp 2 --layers-per-stage 16,x", "--layers-per-stage: got 16,x; expected layers per stage, integers >= 1");
  refuse("--pp 2 --layers-per-stage 32,0", "--layers-per-stage: got 32,0");
  refuse("--pp 2 --resplit-at 5", "--resplit-at: got 5; expected SECONDS:SPLIT");
  refuse("--pp 2 --resplit-at -1:16,16", "--resplit-at: got -1:16,16; expected SECONDS:SPLIT");
  refuse("--pp 2 --resplit-at inf:16,16", "--resplit-at: got inf:16,16; expected SECONDS:SPLIT");
  refuse("--pp 2 --resplit-at 5:16,17", "layers per stage 16,17 must give each of the 2 stages");
  refuse("--resplit-at 5:32", "--resplit-at needs a pipeline of 2 or more stages (--pp 1)");
}

TEST_CASE("serve --draft-model: at acceptance 1 TPOT = (K draft passes + verification) / (K + 1); at 0 one token a step") {
  using namespace hetsim;
  const GpuCatalog catalog = GpuCatalog::load(kRoot + "/models/gpus");
  const TransformerConfig model = load_transformer_config(kRoot + "/models/configs/llama-3-8b.json");
  const TransformerConfig draft = load_transformer_config(kRoot + "/models/configs/llama-3.2-1b.json");
  serving::StageHardware hw;
  hw.gpu = &catalog.at("a100-80gb");
  const serving::ReplicaCost target_cost(model, Dtype::kBf16, 1, {hw});
  const serving::ReplicaCost draft_cost(draft, Dtype::kBf16, 1, {hw});
  // Prompt 300, 9 output tokens: the prefill's, then two steps of K = 3 proposals + 1.
  double decode = 0;
  for (const long cached : {300L, 304L}) {
    for (long j = 0; j < 3; ++j) {
      serving::IterationWork pass;
      // After the first step accepted all, the draft's first pass also reads its last proposal.
      if (j == 0 && cached == 304) {
        pass.add_prefill(2, cached - 1, true);
      } else {
        pass.add_decode(cached + j);
      }
      decode += draft_cost.iteration_seconds(pass);
    }
    serving::IterationWork verify;
    verify.add_verification(4, cached);
    decode += target_cost.iteration_seconds(verify);
  }
  const std::string spec = " serve --replicas 1 --requests 1 --prompt-tokens 300 --output-tokens 9 --draft-model " +
                           kRoot + "/models/configs/llama-3.2-1b.json --spec-tokens 3 --json --acceptance-rate ";
  const auto out = scratch("spec1.json");
  REQUIRE(shell(kBin + spec + "1 > " + out.string()) == 0);
  const auto report = read_json(out);
  CHECK(report["tpot"]["p50_ms"].get<double>() == doctest::Approx(decode / 8 * 1e3).epsilon(1e-12));
  CHECK(report["speculative"]["tokens_per_step"] == 4.0);
  CHECK(report["speculative"]["acceptance_observed"] == 1.0);
  CHECK(report["speculative"]["draft_model"] == "meta-llama/Llama-3.2-1B");
  REQUIRE(shell(kBin + spec + "0 > " + out.string()) == 0);
  const auto none = read_json(out);
  CHECK(none["speculative"]["tokens_per_step"] == 1.0);
  CHECK(none["speculative"]["draft_tokens_accepted"] == 0);
  // 8 tokens after the first, one a step: proposals 3, 3, 3, 3, 3, 2, 1, then one plain decode.
  CHECK(none["speculative"]["verification_steps"] == 7);
}

TEST_CASE("serve --layers-per-stage: the stages hold the layers given and the table says so") {
  const auto out = scratch("split.txt");
  REQUIRE(shell(kBin + " serve --pp 3 --replicas 2 --requests 20 --layers-per-stage 10,14,8 > " + out.string()) == 0);
  CHECK(slurp(out).find("layers per stage: 10, 14, 8\n") != std::string::npos);
  const auto json = scratch("split.json");
  REQUIRE(shell(kBin + " serve --pp 3 --replicas 2 --requests 20 --layers-per-stage 10,14,8 --json > " + json.string()) == 0);
  const auto report = read_json(json);
  for (const auto& replica : report["replica_details"]) CHECK(replica["stage_layers"] == nlohmann::json({10, 14, 8}));
}

TEST_CASE("serve --resplit-at: every replica re-splits once, reported and traced; with a draft, runs repeat exactly") {
  const auto out = scratch("resplit.json");
  const auto trace = scratch("resplit.trace.json");
  REQUIRE(shell(kBin + " serve --pp 2 --replicas 2 --requests 100 --rate 10 --resplit-at 5:12,20 --json --trace " +
                trace.string() + " > " + out.string()) == 0);
  const std::string draft = " --draft-model " + kRoot + "/models/configs/llama-3.2-1b.json --spec-tokens 3 " +
                            "--acceptance-rate 0.7 --seed 7";
  for (const char* name : {"a", "b"}) {
    REQUIRE(shell(kBin + " serve --pp 2 --replicas 2 --requests 100 --rate 10 --resplit-at 5:12,20 --json" + draft +
                  " --trace " + scratch(std::string("spec_") + name + ".trace.json").string() + " > " +
                  scratch(std::string("spec_") + name + ".json").string()) == 0);
  }
  CHECK(slurp(scratch("spec_a.json")) == slurp(scratch("spec_b.json")));
  CHECK(slurp(scratch("spec_a.trace.json")) == slurp(scratch("spec_b.trace.json")));
  const auto report = read_json(out);
  REQUIRE(report["reconfigurations"].size() == 2);
  for (const auto& rc : report["reconfigurations"]) {
    CHECK(rc["requested_s"] == 5.0);
    CHECK(rc["layers_moved"] == 4);
    CHECK(rc["to_layers"] == nlohmann::json({12, 20}));
    CHECK(rc["pause_s"].get<double>() >= rc["transfer_s"].get<double>());
  }
  for (const auto& replica : report["replica_details"]) CHECK(replica["stage_layers"] == nlohmann::json({12, 20}));
  CHECK(shell(kBin + " validate " + trace.string() + " > /dev/null") == 0);
  CHECK(slurp(trace).find("\"re-split\"") != std::string::npos);
}

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
  refuse("--prefill-replicas 8", "--prefill-replicas 8 must leave at least one of the 8 replicas to decode");
  refuse("--replicas -1", "--replicas -1 must be 0 (all) or more");
  refuse("--gpu-memory-utilization 1.5", "--gpu-memory-utilization 1.5 must be in (0, 1]");
  refuse("--requests-csv " + kRoot + "/tests/serving/data/azure_sample.csv --tp 3",
         "tp 3 must divide the 32 attention heads");
}

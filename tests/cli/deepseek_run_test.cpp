// DeepSeek-V3 through `hetsim run`: the shipped config.json trains with DualPipe and expert
// parallelism as the technical report describes (section 3.2: no tensor parallelism, pipeline
// stages with DualPipe, experts over the data-parallel GPUs), here scaled to the default 4-node
// cluster; two runs give identical reports, and the model FLOPs (the MFU's numerator) are the
// closed form of 3 dense layers, 58 MoE layers, the LM head and one multi-token prediction depth.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "cli_test_support.hpp"

using hetsim::test::read_json;
using hetsim::test::shell;

TEST_CASE("DeepSeek-V3 runs with DualPipe, ep 8 and 61 layers split 15,16,16,14; reports repeat byte for byte") {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-deepseek-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string run = std::string(HETSIM_BINARY) + " run --model " + HETSIM_SOURCE_DIR +
                          "/models/configs/deepseek-v3.json --tp 1 --pp 4 --vpp 2 --ep 8 "
                          "--layers-per-stage 15,16,16,14 --schedule dualpipe --gbs 64 --seq-length 4096 "
                          "--use-flash-attn --use-distributed-optimizer --recompute-granularity full --json";
  REQUIRE(shell(run + " > " + (dir / "a.json").string()) == 0);
  REQUIRE(shell(run + " > " + (dir / "b.json").string()) == 0);
  auto a = read_json(dir / "a.json");
  auto b = read_json(dir / "b.json");
  std::filesystem::remove_all(dir);
  a.erase("wall_s");
  b.erase("wall_s");
  CHECK(a.dump() == b.dump());
  CHECK(a["plan"]["layers_per_stage"] == nlohmann::json::array({15, 16, 16, 14}));
  CHECK(a["plan"]["ep"] == 8);
  // Group-limited routing is not modelled, and the report says so.
  REQUIRE(a["ignored_config_fields"].size() == 2);
  CHECK(a["ignored_config_fields"][0].get<std::string>().rfind("n_group: ", 0) == 0);
  CHECK(a["ignored_config_fields"][1].get<std::string>().rfind("topk_group: ", 0) == 0);
  CHECK(a["bubble_fraction_per_rank"].size() == 4);
  const double mfu = a["mfu"].get<double>();
  MESSAGE("DeepSeek-V3, 32 H100s: iteration " << a["iteration_time_s"].get<double>() << " s, MFU " << mfu);
  CHECK(mfu > 0.0);
  CHECK(mfu < 1.0);
  // Model FLOPs in closed form: 6 x tokens x the GEMM weights a token goes through, plus the
  // attention core's QK^T (width 192) and PV (width 128) over the whole 4096 x 4096 square,
  // forward and backward (3 x 2 s heads (192 + 128) per token), in 61 + 1 layers. GEMM weights:
  // MLA's projections (its parameters less the two latent norms); a dense layer's SwiGLU MLP; a
  // MoE layer's router and 8 routed + 1 shared experts; the LM head; the MTP depth's 2h x h
  // projection, MoE layer and second LM-head pass.
  const double h = 7168, vocab = 129280, s = 4096, heads = 128, tokens = 64 * 4096;
  const double mla = 187107328.0 - 1536 - 512;
  const double dense = mla + 3 * h * 18432;
  const double moe = mla + h * 256 + 9 * 3 * h * 2048;
  const double gemm = 3 * dense + 58 * moe + vocab * h + (2 * h * h + moe + vocab * h);
  const double core = 62 * 3 * 2 * s * heads * (192 + 128);
  const double expected = tokens * (6 * gemm + core);
  const double actual = a["model_flops_per_iteration"].get<double>();
  MESSAGE("model FLOPs: expected " << expected << ", actual " << actual);
  CHECK(std::abs(actual - expected) / expected < 1e-12);
}

TEST_CASE("the text report and validate list the config fields hetsim does not model") {
  const auto dir = std::filesystem::temp_directory_path() / ("hetsim-ignored-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string model = std::string(HETSIM_SOURCE_DIR) + "/models/configs/deepseek-v3.json";
  REQUIRE(shell(std::string(HETSIM_BINARY) + " run --model " + model +
                " --tp 1 --pp 4 --vpp 2 --ep 8 --layers-per-stage 15,16,16,14 --schedule dualpipe --gbs 64 "
                "--seq-length 4096 --use-flash-attn --use-distributed-optimizer --recompute-granularity full > " +
                (dir / "run.txt").string()) == 0);
  REQUIRE(shell(std::string(HETSIM_BINARY) + " validate " + model + " > " + (dir / "validate.txt").string()) == 0);
  const std::string run = hetsim::test::slurp(dir / "run.txt");
  const std::string validate = hetsim::test::slurp(dir / "validate.txt");
  std::filesystem::remove_all(dir);
  CHECK(run.find("config field not modelled    n_group: group-limited routing") != std::string::npos);
  CHECK(run.find("config field not modelled    topk_group: ") != std::string::npos);
  CHECK(run.find("tp 1 x pp 4 x dp 8 (ep 8), vpp 2") != std::string::npos);
  CHECK(validate.find("not modelled: n_group: ") != std::string::npos);
}

// run_report_table's OUT OF MEMORY lines: GPUs whose lines read the same share one line, their ids
// as ranges, so that a 16k-GPU run prints a handful of lines, while GPUs that differ read as they
// always have; the JSON report keeps every GPU.
#include "traces/run_report.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/units.hpp"

using namespace hetsim;

namespace {

GpuMemory oom_gpu(GpuId gpu, const std::string& type, double need_gib, double capacity_gib) {
  GpuMemory m;
  m.gpu = gpu;
  m.gpu_type = type;
  m.static_bytes = need_gib * units::kGiB;
  m.capacity_bytes = capacity_gib * units::kGiB;
  return m;
}

// The table's OUT OF MEMORY lines (or its "out of memory" line), in order.
std::vector<std::string> oom_lines(const std::vector<GpuMemory>& oom) {
  RunResult result;
  result.oom = oom;
  result.memory = oom;
  const std::string table = run_report_table(result, RunContext{"c.json", "m.json", "m", 1, 0, ""});
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    if (line.find("out of memory") != std::string::npos ||
        line.find("OUT OF MEMORY") != std::string::npos)
      lines.push_back(line);
  return lines;
}

std::string oom_line(const std::string& text) {
  return fmt::format("  {:<28} {}", "OUT OF MEMORY", text);
}

}  // namespace

TEST_CASE("GPUs whose lines differ read one line each, as before") {
  const std::vector<GpuMemory> oom = {oom_gpu(1, "h100-sxm", 90, 79.6),
                                      oom_gpu(2, "h100-sxm", 91, 79.6),
                                      oom_gpu(5, "a100-sxm-40gb", 90, 40)};
  CHECK(oom_lines(oom) ==
        std::vector<std::string>{
            "  OUT OF MEMORY                gpu 1 (h100-sxm) needs 90.0 GiB of 79.6 GiB",
            "  OUT OF MEMORY                gpu 2 (h100-sxm) needs 91.0 GiB of 79.6 GiB",
            "  OUT OF MEMORY                gpu 5 (a100-sxm-40gb) needs 90.0 GiB of 40.0 GiB"});
  CHECK(oom_lines({}) == std::vector<std::string>{"  out of memory                none"});
}

TEST_CASE("GPUs whose lines read the same share one, as ranges, in order of their first GPU") {
  std::vector<GpuMemory> oom;
  for (GpuId g = 0; g < 8; ++g) oom.push_back(oom_gpu(g, "h100-sxm", 297.1, 79.7));
  for (GpuId g = 8; g < 16; ++g) oom.push_back(oom_gpu(g, "h100-sxm", 250.04, 79.7));
  for (GpuId g = 16; g < 24; ++g) oom.push_back(oom_gpu(g, "h100-sxm", 297.1, 79.7));
  oom.push_back(oom_gpu(30, "h100-sxm", 297.14, 79.7));  // other bytes, the same line
  oom.push_back(oom_gpu(31, "a100-sxm-80gb", 297.1, 79.7));  // same figures, another type
  CHECK(oom_lines(oom) == std::vector<std::string>{
                              oom_line("gpus 0-7, 16-23, 30 (h100-sxm) need 297.1 GiB of 79.7 GiB"),
                              oom_line("gpus 8-15 (h100-sxm) need 250.0 GiB of 79.7 GiB"),
                              oom_line("gpu 31 (a100-sxm-80gb) needs 297.1 GiB of 79.7 GiB")});
}

TEST_CASE("16,384 GPUs out of memory print one line per pipeline stage") {
  // tp 8 x pp 16 x dp 128 in Megatron's rank order (tp, dp, pp): stage s holds GPUs 1024 s to
  // 1024 s + 1023; the first and last stages need more than the others.
  std::vector<GpuMemory> oom;
  for (GpuId g = 0; g < 16384; ++g) {
    const int stage = g / 1024;
    oom.push_back(oom_gpu(g, "h100-sxm", stage == 0 || stage == 15 ? 297.1 : 280 - stage, 79.6));
  }
  const std::vector<std::string> lines = oom_lines(oom);
  REQUIRE(lines.size() == 15);  // stages 1..14 differ, 0 and 15 read the same
  CHECK(lines[0] == oom_line("gpus 0-1023, 15360-16383 (h100-sxm) need 297.1 GiB of 79.6 GiB"));
  CHECK(lines[1] == oom_line("gpus 1024-2047 (h100-sxm) need 279.0 GiB of 79.6 GiB"));
}

TEST_CASE("runs of one length at one stride are abbreviated from five on") {
  // Two alternating groups of 8 over 16,384 GPUs: 1,024 runs each, 16 apart.
  std::vector<GpuMemory> oom;
  for (GpuId g = 0; g < 16384; ++g)
    oom.push_back(oom_gpu(g, "h100-sxm", (g / 8) % 2 == 0 ? 100 : 90, 79.6));
  CHECK(oom_lines(oom) ==
        std::vector<std::string>{oom_line("gpus 0-7, 16-23, ..., 16368-16375 (1024 ranges, 16 "
                                          "apart) (h100-sxm) need 100.0 GiB of 79.6 GiB"),
                                 oom_line("gpus 8-15, 24-31, ..., 16376-16383 (1024 ranges, 16 "
                                          "apart) (h100-sxm) need 90.0 GiB of 79.6 GiB")});
  // Four runs at one stride stay a list; a fifth run off the stride ends the progression.
  std::vector<GpuMemory> few;
  for (const GpuId g : {0, 4, 8, 12}) few.push_back(oom_gpu(g, "h100-sxm", 100, 79.6));
  CHECK(oom_lines(few) == std::vector<std::string>{
                              oom_line("gpus 0, 4, 8, 12 (h100-sxm) need 100.0 GiB of 79.6 GiB")});
  std::vector<GpuMemory> mixed;
  for (const GpuId g : {0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 60, 61})
    mixed.push_back(oom_gpu(g, "h100-sxm", 100, 79.6));
  CHECK(oom_lines(mixed) ==
        std::vector<std::string>{oom_line("gpus 0-1, 10-11, ..., 40-41 (5 ranges, 10 apart), 50, "
                                          "60-61 (h100-sxm) need 100.0 GiB of 79.6 GiB")});
}

TEST_CASE("the JSON report keeps every GPU out of memory") {
  RunResult result;
  for (GpuId g = 0; g < 64; ++g) result.oom.push_back(oom_gpu(g, "h100-sxm", 100, 79.6));
  const nlohmann::json report =
      run_report_json(result, RunContext{"c.json", "m.json", "m", 64, 0, ""});
  REQUIRE(report.at("oom").size() == 64);
  CHECK(report.at("oom").at(63).at("gpu") == 63);
}

// Reading JSON inputs of every shape near the 32 MiB input limit: wall time, MB/s and peak
// resident memory of read_json_file (the parser behind every loader) per shape. Usage:
// bench_json_read [REPEATS] (default 3; the median is reported). Exits 1 when a shape's median
// exceeds 2 s, the bound every input must meet however it is shaped.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "base/json_input.hpp"
#include "tools/bench/bench_scenarios.hpp"

namespace {

constexpr std::size_t kTargetBytes = (std::size_t{32} << 20) - 4096;  // just under the limit
constexpr double kBoundSeconds = 2.0;

// A document of `open`, then as many `element(i)` as fit, comma-separated, then `close`.
std::string repeated(const std::string& open, const std::function<std::string(std::size_t)>& element,
                     const std::string& close) {
  std::string text = open;
  for (std::size_t i = 0;; ++i) {
    std::string next = (i ? "," : "") + element(i);
    if (text.size() + next.size() + close.size() > kTargetBytes) break;
    text += next;
  }
  return text + close;
}

struct Shape {
  std::string name;
  std::string text;
};

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  out.push_back({"object of distinct keys", repeated("{", [](std::size_t i) {
                   return fmt::format("\"k{}\":1", i);
                 }, "}")});
  out.push_back({"array of empty objects", repeated("{\"sites\":[", [](std::size_t) {
                   return std::string("{}");
                 }, "]}")});
  out.push_back({"array of small objects", repeated("[", [](std::size_t i) {
                   return fmt::format("{{\"rank\":{},\"t\":{}.5,\"name\":\"op\"}}", i, i);
                 }, "]")});
  out.push_back({"array of numbers", repeated("[", [](std::size_t i) {
                   return fmt::format("{}.25e-3", i);
                 }, "]")});
  // 63 levels (the limit is 64) of arrays and objects, repeated side by side.
  std::string nested;
  for (int level = 0; level < 31; ++level) nested += "{\"a\":[";
  nested += "1";
  for (int level = 0; level < 31; ++level) nested += "]}";
  out.push_back({"nested 63 levels, side by side", repeated("[", [&](std::size_t) { return nested; }, "]")});
  out.push_back({"one long string", "[\"" + std::string(kTargetBytes - 4, 'x') + "\"]"});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("hetsim-bench-json-{}.json", static_cast<long>(::getpid()));
  bool within_bound = true;
  fmt::print("{:<34} {:>8} {:>10} {:>9} {:>12}\n", "shape", "MiB", "median_s", "MB/s", "peak_RSS_MiB");
  for (const Shape& shape : shapes()) {
    { std::ofstream(path, std::ios::binary) << shape.text; }
    std::vector<double> seconds;
    hetsim::bench::reset_peak_rss();
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const nlohmann::json document = hetsim::read_json_file(path.string());
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double mib = static_cast<double>(shape.text.size()) / (1 << 20);
    fmt::print("{:<34} {:>8.1f} {:>10.3f} {:>9.1f} {:>12.0f}\n", shape.name, mib, median,
               static_cast<double>(shape.text.size()) / 1e6 / median, hetsim::bench::peak_rss_mib());
    within_bound = within_bound && median <= kBoundSeconds;
  }
  std::filesystem::remove(path);
  if (!within_bound) {
    fmt::print(stderr, "a shape took more than {} s to read\n", kBoundSeconds);
    return 1;
  }
  return 0;
}

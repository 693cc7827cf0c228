// `hetsim collective`: one collective over a group of GPUs of a cluster, simulated as flows on
// the real routes (or costed by the alpha-beta fast path), reported as nccl-tests reports it.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>

#include "base/error.hpp"
#include "base/report_json.hpp"
#include "models/gpu_catalog.hpp"
#include "sim/collectives/alpha_beta.hpp"
#include "sim/collectives/collective_plan.hpp"
#include "sim/collectives/flow_collective.hpp"
#include "sim/transport_window.hpp"
#include "tools/hetsim/commands.hpp"
#include "tools/hetsim/shipped_paths.hpp"
#include "topologies/cluster_loader.hpp"
#include "topologies/link_ranges.hpp"

namespace hetsim::cli {

namespace {

struct CollectiveArgs {
  std::string cluster;
  std::string op = "all-reduce";
  std::string algo = "ring";
  std::string gpus = "8";
  std::string bytes = "1G";
  bool bytes_given = false;
  std::string sweep;  // MIN:MAX:FACTOR, as nccl-tests' -b MIN -e MAX -f FACTOR
  double overhead_us = 0;
  int nccl_sockets = 1;
  bool alpha_beta = false;
  bool json = false;
};

// "N" = GPUs 0..N-1; "a,b,c" = those GPUs, in ring order.
std::vector<GpuId> parse_gpus(const std::string& text, int gpu_count) {
  std::vector<GpuId> gpus;
  const auto fail = [&](const std::string& why) {
    throw Error(fmt::format("--gpus: got \"{}\"; expected {}", text, why));
  };
  if (text.empty()) fail("a GPU count N or a list of GPU ids like 0,1,8,9");
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 9)
      fail("a GPU count N or a list of GPU ids like 0,1,8,9");
    gpus.push_back(std::stoi(item));
    start = comma + 1;
  }
  if (gpus.size() == 1) {
    const int n = gpus.front();
    if (n < 2 || n > gpu_count) fail(fmt::format("a count from 2 to the cluster's {} GPUs", gpu_count));
    gpus.resize(static_cast<std::size_t>(n));
    std::iota(gpus.begin(), gpus.end(), 0);
    return gpus;
  }
  for (GpuId g : gpus)
    if (g >= gpu_count) fail(fmt::format("GPU ids below the cluster's {} GPUs", gpu_count));
  return gpus;
}

// Bytes with an optional K, M or G suffix in powers of 1024, as nccl-tests' -b/-e take them.
double parse_bytes(const std::string& text) {
  std::size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string suffix = text.substr(used);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 0;
  if (suffix.empty() || suffix == "B") scale = 1;
  else if (suffix == "K" || suffix == "KIB") scale = 1024.0;
  else if (suffix == "M" || suffix == "MIB") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GIB") scale = 1024.0 * 1024 * 1024;
  if (used == 0 || scale == 0 || !(value >= 0) || !std::isfinite(value * scale))
    throw Error(fmt::format("--bytes: got \"{}\"; expected a finite size >= 0 in bytes, optionally with K, M "
                            "or G (KiB, MiB, GiB) as nccl-tests takes it, e.g. 1G",
                            text));
  return value * scale;
}

// The flow simulation runs about a million transfers a second (BENCHMARKS.md: a 4,096-GPU flat
// ring's 33.5 million in 31 s, a 256-GPU ring's 1.04 million in 1.5 s); above ten seconds' worth
// the count and the estimate are told before it starts, with the way to an answer at once.
constexpr double kTransfersPerSecond = 1e6;
// The most sizes one --sweep may ask for (8 B to 8 GiB by 2 is 31).
constexpr std::size_t kMaxSweepSizes = 64;
constexpr double kAnnouncedTransfers = 1e7;

void announce_long_simulation(double transfers) {
  if (transfers <= kAnnouncedTransfers) return;
  fmt::print(stderr,
             "hetsim: note: {:.3g} transfers to simulate, about {:.0f} s at a million a second; "
             "--alpha-beta answers at once\n",
             transfers, transfers / kTransfersPerSecond);
  std::fflush(stderr);
}

// nccl-tests' -b MIN -e MAX -f FACTOR as "MIN:MAX:FACTOR": MIN, MIN x FACTOR, ... up to MAX.
std::vector<double> sweep_sizes(const std::string& text) {
  const auto fail = [&] {
    return Error(fmt::format("--sweep: got \"{}\"; expected MIN:MAX:FACTOR as nccl-tests' -b -e -f take them "
                             "(sizes with K, M or G; MIN <= MAX; an integer FACTOR >= 2; at most {} sizes), "
                             "e.g. 8:8G:2",
                             text, kMaxSweepSizes));
  };
  const std::size_t first = text.find(':');
  const std::size_t second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos) throw fail();
  double low = 0, high = 0;
  try {
    low = parse_bytes(text.substr(0, first));
    high = parse_bytes(text.substr(first + 1, second - first - 1));
  } catch (const Error&) {
    throw fail();
  }
  const std::string factor_text = text.substr(second + 1);
  int factor = 0;
  const auto [end, error] = std::from_chars(factor_text.data(), factor_text.data() + factor_text.size(), factor);
  if (error != std::errc{} || end != factor_text.data() + factor_text.size() || factor < 2 || !(low > 0) ||
      low > high)
    throw fail();
  std::vector<double> sizes;
  for (double size = low; size <= high; size *= factor) {
    if (sizes.size() == kMaxSweepSizes) throw fail();
    sizes.push_back(size);
  }
  return sizes;
}

// One collective's time on the cluster, by flows or by the closed form.
struct Measured {
  double bytes = 0;
  double time_s = 0;
  nlohmann::json extra = nlohmann::json::object();  // the flow simulation's transfers and events
};

void run(const CollectiveArgs& args) {
  const GpuCatalog catalog = GpuCatalog::load(gpu_catalog_dir());
  const Cluster cluster = load_cluster(args.cluster, catalog.keys());
  const CollectiveOp op = parse_collective_op(args.op, "--op");
  const CollectiveAlgo algo = parse_collective_algo(args.algo, "--algo");
  const std::vector<GpuId> gpus = parse_gpus(args.gpus, cluster.gpu_count());
  if (!args.sweep.empty() && args.bytes_given)
    throw Error("--sweep and --bytes both size the message; give one of them");
  const std::vector<double> sizes = args.sweep.empty() ? std::vector<double>{parse_bytes(args.bytes)}
                                                       : sweep_sizes(args.sweep);
  // At most a link's longest latency (topologies/link_ranges.hpp); inf used to end in a report
  // that was not finite.
  if (!(args.overhead_us >= 0 && args.overhead_us <= link_ranges::kMaxLatencyS * 1e6))
    throw Error(fmt::format("--overhead-us: got {}; expected a time in [0, {:g}] us", args.overhead_us,
                            link_ranges::kMaxLatencyS * 1e6));

  const auto measure = [&](double bytes) {
    Measured m{bytes};
    if (args.alpha_beta) {
      m.time_s = alpha_beta_collective_s(cluster, op, algo, gpus, bytes) + args.overhead_us * 1e-6;
      return m;
    }
    const CollectivePlan plan = plan_collective(cluster, op, algo, gpus, bytes);
    announce_long_simulation(static_cast<double>(plan.transfer_count()));
    NetworkOptions options;
    options.per_message_overhead_s = args.overhead_us * 1e-6;
    options.connection_window_bytes = socket_connection_window_bytes(args.nccl_sockets);
    const CollectiveTiming timing = simulate_collective_flows(cluster, plan, options);
    m.time_s = timing.time_s;
    m.extra["transfers"] = timing.transfers;
    m.extra["events"] = timing.events;
    return m;
  };
  const int n = static_cast<int>(gpus.size());
  const auto algbw = [](const Measured& m) { return m.time_s > 0 ? m.bytes / m.time_s : 0; };
  const auto figures = [&](const Measured& m) {
    nlohmann::json out = {{"bytes", m.bytes},
                          {"time_s", m.time_s},
                          {"algbw_GBps", algbw(m) / 1e9},
                          {"busbw_GBps", algbw(m) * bus_bandwidth_factor(op, n) / 1e9}};
    out.update(m.extra);
    return out;
  };
  const nlohmann::json header = {{"cluster", cluster.name()},
                                 {"op", to_string(op)},
                                 {"algo", to_string(algo)},
                                 {"method", args.alpha_beta ? "alpha-beta" : "flow"},
                                 {"gpus", n}};
  const std::string title = fmt::format("{} {} over {} GPUs of {} ({})", to_string(op), to_string(algo), n,
                                        cluster.name(), args.alpha_beta ? "alpha-beta" : "flow simulation");
  if (args.sweep.empty()) {
    const Measured m = measure(sizes.front());
    if (args.json) {
      nlohmann::json out = header;
      out.update(figures(m));
      fmt::print("{}\n", dump_report(out, 2));
      return;
    }
    fmt::print("{}, {:.0f} bytes\n", title, m.bytes);
    fmt::print("  time   {:.6g} us\n  algbw  {:.2f} GB/s\n  busbw  {:.2f} GB/s  (nccl-tests definition)\n",
               m.time_s * 1e6, algbw(m) / 1e9, algbw(m) * bus_bandwidth_factor(op, n) / 1e9);
    return;
  }
  // A curve, as nccl-tests prints one: a row per size.
  nlohmann::json rows = nlohmann::json::array();
  std::string table = fmt::format("{}\n{:>14} {:>14} {:>12} {:>12}\n", title, "size(B)", "time(us)",
                                  "algbw(GB/s)", "busbw(GB/s)");
  for (const double bytes : sizes) {
    const nlohmann::json row = figures(measure(bytes));
    table += fmt::format("{:>14.0f} {:>14.2f} {:>12.2f} {:>12.2f}\n", bytes, row["time_s"].get<double>() * 1e6,
                         row["algbw_GBps"].get<double>(), row["busbw_GBps"].get<double>());
    rows.push_back(row);
  }
  if (args.json) {
    nlohmann::json out = header;
    out["sizes"] = rows;
    fmt::print("{}\n", dump_report(out, 2));
    return;
  }
  fmt::print("{}", table);
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto args = std::make_shared<CollectiveArgs>();
  args->cluster = shipped(kDefaultCluster);
  CLI::App* cmd = app.add_subcommand(
      "collective",
      "Simulate one collective over GPUs of a cluster as flows on the real routes and report time, "
      "algbw and busbw as nccl-tests defines them (GB = 10^9 bytes).\n"
      "Example: hetsim collective --cluster topologies/clusters/dgx-h100-4node.json --op all-reduce "
      "--algo ring --gpus 32 --bytes 1G --json");
  cmd->add_option("--cluster", args->cluster, "cluster JSON (topologies/README.md)")->capture_default_str();
  cmd->add_option("--op", args->op, "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast or send")
      ->capture_default_str();
  cmd->add_option("--algo", args->algo, "ring, tree (all-reduce only) or hierarchical")->capture_default_str();
  cmd->add_option("--gpus", args->gpus,
                  "N (GPUs 0..N-1) or a list of GPU ids in ring order, e.g. 0,1,8,9; send: sender,receiver")
      ->capture_default_str();
  cmd->add_option("--bytes", args->bytes, "message size S as nccl-tests sizes it; K, M, G = KiB, MiB, GiB")
      ->capture_default_str()
      ->each([args](const std::string&) { args->bytes_given = true; });
  cmd->add_option("--sweep", args->sweep,
                  "MIN:MAX:FACTOR: a row per size from MIN to MAX by FACTOR, as nccl-tests' -b -e -f "
                  "(e.g. 8:8G:2)");
  cmd->add_option("--overhead-us", args->overhead_us, "fixed software cost added to every message (us)")
      ->capture_default_str();
  cmd->add_option("--nccl-sockets", args->nccl_sockets,
                  "TCP connections per NCCL socket-transport connection: over WAN and pair links each "
                  "transfer keeps this many 3 MiB windows in flight per round trip (as run's)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--alpha-beta", args->alpha_beta,
                "closed-form fast path instead of the flow simulation (no transport windows)");
  cmd->add_flag("--json", args->json, "print the result as JSON");
  cmd->callback([args] { run(*args); });
}

}  // namespace hetsim::cli

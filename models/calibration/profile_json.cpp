// The profile JSON format (documented in README.md): keys carry their units.
#include <fmt/format.h>

#include <algorithm>

#include "base/atomic_file.hpp"
#include "base/error.hpp"
#include "base/json_input.hpp"
#include "models/calibration/profile.hpp"

namespace hetsim::calibration {

namespace {

constexpr const char* kFormat = "hetsim-profile/1";
constexpr double kGBps = 1e9;  // decimal GB/s, as bandwidths are quoted
constexpr double kUs = 1e-6;

nlohmann::json pairs_json(const std::vector<std::pair<double, double>>& pairs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [a, b] : pairs) out.push_back({a, b});
  return out;
}

nlohmann::json transfer_json(const TransferFit& f, const char* rate_key) {
  return {{"ranks", f.ranks},
          {"alpha_us", f.fit.alpha_s / kUs},
          {rate_key, f.fit.rate / kGBps},
          {"bytes_seconds", pairs_json(f.bytes_seconds)}};
}

// Ranges a measurement can physically hold: a size (bytes, or a GEMM's m, n, k) of at least one
// and at most a petabyte, a time between a nanosecond and an hour. Anything outside (1e-300 s,
// 1e300 bytes) is a broken file, and would turn into infinite or NaN iteration times downstream.
constexpr double kMinSize = 1, kMaxSize = 1e15;
constexpr double kMinSeconds = 1e-9, kMaxSeconds = 3600;

// A row [size, ..., seconds] of the given length: every cell a size except the last, a time.
std::vector<double> number_row(const JsonInput& row, std::size_t length, const std::string& expected) {
  if (!row.value().is_array() || row.array_size() != length) row.fail(expected);
  std::vector<double> values;
  for (std::size_t i = 0; i < length; ++i) {
    const JsonInput cell = row.at(i);
    const bool seconds = i + 1 == length;
    const double low = seconds ? kMinSeconds : kMinSize;
    const double high = seconds ? kMaxSeconds : kMaxSize;
    if (!cell.value().is_number() || !(cell.value().get<double>() >= low && cell.value().get<double>() <= high))
      cell.fail(seconds ? fmt::format("a time in seconds between {:g} and {:g}", low, high)
                        : fmt::format("a size between {:g} and {:g}", low, high));
    values.push_back(cell.value().get<double>());
  }
  return values;
}

// Memory-bound kinds a profile may hold: those the cost model looks up (models/layer_ops.cpp,
// models/calibration/README.md) and those the suite measures for the record (softmax, rope).
// Anything else is a typo that would be loaded and never used.
void check_memory_kind(const JsonInput& object, const std::string& key) {
  static const std::vector<std::string> known{"rmsnorm", "layernorm", "softmax", "rope",      "silu",
                                              "silu_mul", "gelu",     "add",     "dropout",  "embedding",
                                              "cross_entropy", "adam"};
  if (std::find(known.begin(), known.end(), key) != known.end()) return;
  const std::string near = nearest_word(key, known);
  object.fail_member(key, near.empty() ? "a memory-bound kind (models/calibration/README.md)"
                                       : fmt::format("a memory-bound kind; did you mean \"{}\"?", near));
}

std::vector<std::pair<double, double>> pairs_from(const JsonInput& list) {
  if (!list.value().is_array()) list.fail("an array of [bytes, seconds] pairs");
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < list.array_size(); ++i) {
    const auto v = number_row(list.at(i), 2, "a [bytes, seconds] pair");
    out.emplace_back(v[0], v[1]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TransferFit transfer_from(const JsonInput& in, const char* rate_key, bool collective) {
  if (collective) {
    in.reject_unknown_keys({"ranks", "alpha_us", rate_key, "bytes_seconds"});
  } else {
    in.reject_unknown_keys({"alpha_us", rate_key, "bytes_seconds", "ranks"});
  }
  TransferFit f;
  f.ranks = static_cast<int>(collective ? in.positive_integer("ranks") : in.integer_or("ranks", 1));
  if (collective && f.ranks < 2) in.fail_member("ranks", "an integer >= 2");
  f.fit.alpha_s = in.non_negative("alpha_us") * kUs;
  f.fit.rate = in.positive(rate_key) * kGBps;
  if (in.has("bytes_seconds")) f.bytes_seconds = pairs_from(in.at("bytes_seconds"));
  return f;
}

// `raw_measurements`: an array of CSV paths; a single string (profiles written before a profile
// could be fitted from several files) is read as a one-file list; absent or "" means none.
std::vector<std::string> raw_measurements_from(const JsonInput& root) {
  if (!root.has("raw_measurements")) return {};
  const JsonInput raw = root.at("raw_measurements");
  if (raw.value().is_string()) {
    const std::string file = raw.value().get<std::string>();
    return file.empty() ? std::vector<std::string>{} : std::vector<std::string>{file};
  }
  if (!raw.value().is_array()) raw.fail("an array of CSV file names (or one file name)");
  std::vector<std::string> files;
  for (std::size_t i = 0; i < raw.array_size(); ++i) {
    const JsonInput file = raw.at(i);
    if (!file.value().is_string() || file.value().get<std::string>().empty()) file.fail("a CSV file name");
    files.push_back(file.value().get<std::string>());
  }
  return files;
}

void check_dtype_key(const JsonInput& object, const std::string& key) {
  static const std::vector<std::string> known{"fp32", "tf32", "bf16", "fp16", "fp8"};
  if (std::find(known.begin(), known.end(), key) == known.end()) {
    const std::string near = nearest_word(key, known);
    object.fail_member(key, near.empty() ? "a dtype key (fp32, tf32, bf16, fp16, fp8)"
                                         : fmt::format("a dtype key; did you mean \"{}\"?", near));
  }
}

}  // namespace

nlohmann::json Profile::to_json() const {
  const GpuInfo& g = data_.gpu;
  nlohmann::json peaks = nlohmann::json::object();
  for (const auto& [dtype, flops] : g.peak_flops) peaks[dtype] = flops / 1e12;
  nlohmann::json out = {
      {"format", kFormat},
      {"gpu",
       {{"name", g.name},
        {"sm_count", g.sm_count},
        {"sm_clock_mhz", g.sm_clock_mhz},
        {"memory_clock_mhz", g.memory_clock_mhz},
        {"driver_version", g.driver_version},
        {"cuda_version", g.cuda_version},
        {"device_count", g.device_count},
        {"peak_tflops", peaks},
        {"hbm_GBps", g.hbm_bytes_per_s / kGBps},
        {"peaks_source", g.peaks_source}}},
      {"raw_measurements", data_.raw_measurements},
  };
  nlohmann::json gemm = nlohmann::json::object();
  for (const auto& [dtype, points] : data_.gemm) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : points) rows.push_back({p.m, p.n, p.k, p.seconds});
    gemm[dtype] = rows;
  }
  out["gemm_m_n_k_seconds"] = gemm;
  nlohmann::json attention = {{"method", data_.attention_method}};
  for (const auto& [dtype, points] : data_.attention) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : points) {
      rows.push_back({{"pass", p.backward ? "bwd" : "fwd"}, {"batch", p.batch}, {"heads", p.heads},
                      {"seq", p.seq}, {"head_dim", p.head_dim}, {"causal", p.causal},
                      {"seconds", p.seconds}});
    }
    attention[dtype] = rows;
  }
  out["attention"] = attention;
  nlohmann::json memory = nlohmann::json::object();
  for (const auto& [kind, points] : data_.memory_bound) memory[kind] = pairs_json(points);
  out["memory_bound_bytes_seconds"] = memory;
  nlohmann::json copies = nlohmann::json::object();
  for (const auto& [kind, f] : data_.copies) copies[kind] = transfer_json(f, "bandwidth_GBps");
  out["copies"] = copies;
  nlohmann::json collectives = nlohmann::json::object();
  for (const auto& [op, fits] : data_.collectives) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& f : fits) list.push_back(transfer_json(f, "bus_bandwidth_GBps"));
    collectives[op] = list;
  }
  out["collectives"] = collectives;
  if (data_.launch_overhead_s) out["launch_overhead_us"] = *data_.launch_overhead_s / kUs;
  return out;
}

void Profile::save(const std::string& path) const {
  AtomicFile file(path);
  file.stream() << to_json().dump(1) << '\n';
  file.commit();
}

Profile Profile::load(const std::string& path) { return from_json(read_json_file(path), path); }

Profile Profile::from_json(const nlohmann::json& json, const std::string& file_name) {
  const JsonInput root(json, file_name);
  root.reject_unknown_keys({"format", "gpu", "raw_measurements", "gemm_m_n_k_seconds", "attention",
                            "memory_bound_bytes_seconds", "copies", "collectives",
                            "launch_overhead_us"});
  if (root.string("format") != kFormat) {
    root.fail_member("format", fmt::format("\"{}\"", kFormat));
  }
  ProfileData d;
  const JsonInput gpu = root.at("gpu");
  gpu.reject_unknown_keys({"name", "sm_count", "sm_clock_mhz", "memory_clock_mhz", "driver_version",
                           "cuda_version", "device_count", "peak_tflops", "hbm_GBps", "peaks_source"});
  d.gpu.name = gpu.string("name");
  d.gpu.sm_count = static_cast<int>(gpu.integer_or("sm_count", 0));
  d.gpu.sm_clock_mhz = gpu.non_negative_or("sm_clock_mhz", 0);
  d.gpu.memory_clock_mhz = gpu.non_negative_or("memory_clock_mhz", 0);
  d.gpu.driver_version = gpu.string_or("driver_version", "");
  d.gpu.cuda_version = gpu.string_or("cuda_version", "");
  d.gpu.device_count = static_cast<int>(gpu.integer_or("device_count", 0));
  d.gpu.hbm_bytes_per_s = gpu.non_negative_or("hbm_GBps", 0) * kGBps;
  d.gpu.peaks_source = gpu.string_or("peaks_source", "");
  if (gpu.has("peak_tflops")) {
    const JsonInput peaks = gpu.at("peak_tflops");
    if (!peaks.value().is_object()) peaks.fail("an object of dtype -> TFLOP/s");
    for (const auto& [key, value] : peaks.value().items()) {
      check_dtype_key(peaks, key);
      d.gpu.peak_flops[key] = peaks.non_negative(key) * 1e12;
    }
  }
  d.raw_measurements = raw_measurements_from(root);

  if (root.has("gemm_m_n_k_seconds")) {
    const JsonInput gemm = root.at("gemm_m_n_k_seconds");
    if (!gemm.value().is_object()) gemm.fail("an object of dtype -> [[m, n, k, seconds], ...]");
    for (const auto& [dtype, rows] : gemm.value().items()) {
      check_dtype_key(gemm, dtype);
      const JsonInput list = gemm.at(dtype);
      if (!list.value().is_array()) list.fail("an array of [m, n, k, seconds]");
      auto& points = d.gemm[dtype];
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        const auto v = number_row(list.at(i), 4, "an [m, n, k, seconds] row");
        points.push_back({v[0], v[1], v[2], v[3]});
      }
    }
  }
  if (root.has("attention")) {
    const JsonInput attention = root.at("attention");
    if (!attention.value().is_object()) attention.fail("an object with \"method\" and dtype keys");
    d.attention_method = attention.string_or("method", "");
    for (const auto& [dtype, rows] : attention.value().items()) {
      if (dtype == "method") continue;
      check_dtype_key(attention, dtype);
      const JsonInput list = attention.at(dtype);
      if (!list.value().is_array()) list.fail("an array of attention points");
      auto& points = d.attention[dtype];
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        const JsonInput p = list.at(i);
        p.reject_unknown_keys({"pass", "batch", "heads", "seq", "head_dim", "causal", "seconds"});
        AttentionPoint a;
        const std::string pass = p.string("pass");
        if (pass != "fwd" && pass != "bwd") p.fail_member("pass", "\"fwd\" or \"bwd\"");
        a.backward = pass == "bwd";
        a.batch = p.positive("batch");
        a.heads = p.positive("heads");
        a.seq = p.positive("seq");
        a.head_dim = p.positive("head_dim");
        a.causal = p.boolean_or("causal", true);
        a.seconds = p.positive("seconds");
        points.push_back(a);
      }
    }
  }
  if (root.has("memory_bound_bytes_seconds")) {
    const JsonInput memory = root.at("memory_bound_bytes_seconds");
    if (!memory.value().is_object()) memory.fail("an object of kind -> [[bytes, seconds], ...]");
    for (const auto& [kind, rows] : memory.value().items()) {
      check_memory_kind(memory, kind);
      d.memory_bound[kind] = pairs_from(memory.at(kind));
    }
  }
  if (root.has("copies")) {
    const JsonInput copies = root.at("copies");
    if (!copies.value().is_object()) copies.fail("an object of copy kind -> fit");
    for (const auto& [kind, value] : copies.value().items()) {
      d.copies[kind] = transfer_from(copies.at(kind), "bandwidth_GBps", false);
    }
  }
  if (root.has("collectives")) {
    const JsonInput collectives = root.at("collectives");
    if (!collectives.value().is_object()) collectives.fail("an object of collective -> [fits by ranks]");
    for (const auto& [op, value] : collectives.value().items()) {
      if (!bus_factor(op, 2)) {
        collectives.fail_member(op, "a collective: all_reduce, all_gather, reduce_scatter, all_to_all, "
                                    "send_recv, broadcast or reduce");
      }
      const JsonInput list = collectives.at(op);
      if (!list.value().is_array()) list.fail("an array of fits, one per rank count");
      auto& fits = d.collectives[op];
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        fits.push_back(transfer_from(list.at(i), "bus_bandwidth_GBps", true));
      }
      std::sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) { return a.ranks < b.ranks; });
    }
  }
  if (root.has("launch_overhead_us")) d.launch_overhead_s = root.positive("launch_overhead_us") * kUs;
  return Profile(std::move(d));
}

}  // namespace hetsim::calibration

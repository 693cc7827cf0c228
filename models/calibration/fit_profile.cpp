#include "models/calibration/fit_profile.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "base/error.hpp"

namespace hetsim::calibration {

Profile fit_profile(const std::vector<Measurement>& measurements, const GpuInfo& gpu,
                    const std::string& attention_method) {
  ProfileData d;
  d.gpu = gpu;
  d.attention_method = attention_method;
  std::map<std::string, std::map<std::tuple<double, double, double>, std::vector<double>>> gemm;
  std::map<std::string, std::map<std::tuple<bool, double, double, double, double, bool>, std::vector<double>>>
      attention;
  std::map<std::string, std::vector<std::pair<double, double>>> memory, copies;
  std::map<std::string, std::map<int, std::vector<std::pair<double, double>>>> collectives;
  std::vector<double> launches;

  for (const Measurement& m : measurements) {
    switch (m.kind) {
      case OpKind::kGemm:
      case OpKind::kAttention:
        if (m.dtype.empty()) {
          throw Error(fmt::format("{}: a {} measurement without a dtype", m.source, to_string(m.kind)));
        }
        if (m.kind == OpKind::kGemm) {
          gemm[m.dtype][{m.m, m.n, m.k}].push_back(m.seconds);
        } else {
          if (m.op != "fwd" && m.op != "bwd") {
            throw Error(fmt::format("{}: attention op \"{}\"; expected \"fwd\" or \"bwd\"", m.source, m.op));
          }
          attention[m.dtype][{m.op == "bwd", m.batch, m.heads, m.seq, m.head_dim, m.causal}].push_back(m.seconds);
        }
        break;
      case OpKind::kMemoryBound: memory[m.op].emplace_back(m.bytes, m.seconds); break;
      case OpKind::kCopy: copies[m.op].emplace_back(m.bytes, m.seconds); break;
      case OpKind::kCollective:
        if (!bus_factor(m.op, m.ranks) || m.ranks < 2) {
          throw Error(fmt::format("{}: collective \"{}\" over {} ranks is not one hetsim models", m.source,
                                  m.op, m.ranks));
        }
        collectives[m.op][m.ranks].emplace_back(m.bytes, m.seconds);
        break;
      case OpKind::kLaunch: launches.push_back(m.seconds); break;
    }
  }

  for (auto& [dtype, shapes] : gemm) {
    for (auto& [shape, times] : shapes) {
      d.gemm[dtype].push_back({std::get<0>(shape), std::get<1>(shape), std::get<2>(shape), median(times)});
    }
  }
  for (auto& [dtype, shapes] : attention) {
    for (auto& [s, times] : shapes) {
      d.attention[dtype].push_back({std::get<0>(s), std::get<1>(s), std::get<2>(s), std::get<3>(s),
                                    std::get<4>(s), std::get<5>(s), median(times)});
    }
  }
  for (auto& [kind, points] : memory) d.memory_bound[kind] = WorkTimeCurve(points).points();
  for (auto& [kind, points] : copies) {
    TransferFit f;
    f.bytes_seconds = WorkTimeCurve(points).points();
    f.fit = fit_alpha_beta(f.bytes_seconds);
    d.copies[kind] = f;
  }
  for (auto& [op, by_ranks] : collectives) {
    for (auto& [ranks, points] : by_ranks) {
      TransferFit f;
      f.ranks = ranks;
      f.bytes_seconds = WorkTimeCurve(points).points();
      // Fit t = alpha + size * factor / busbw: the rate fitted on size*factor is the bus bandwidth.
      const double factor = *bus_factor(op, ranks);
      std::vector<std::pair<double, double>> scaled;
      for (const auto& [bytes, t] : f.bytes_seconds) scaled.emplace_back(bytes * factor, t);
      f.fit = fit_alpha_beta(scaled);
      d.collectives[op].push_back(f);
    }
  }
  if (!launches.empty()) d.launch_overhead_s = median(launches);
  return Profile(std::move(d));
}

}  // namespace hetsim::calibration

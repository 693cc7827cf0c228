#include "recorder.hpp"

#include <fmt/format.h>

#include "base/atomic_file.hpp"

namespace hetsim::suite {

void Recorder::add(calibration::Measurement m, const Spread& spread) {
  fmt::print("  {:<12} {:<14} {:<5} m={} n={} k={} b={} h={} s={} d={} bytes={} ranks={}: {:.2f} us\n",
             calibration::to_string(m.kind), m.op, m.dtype, m.m, m.n, m.k, m.batch, m.heads, m.seq, m.head_dim,
             m.bytes, m.ranks, m.seconds * 1e6);
  measurements_.push_back(std::move(m));
  spreads_.push_back(spread);
}

void Recorder::write_csv(const std::string& path) const {
  AtomicFile file(path);
  auto& out = file.stream();
  out << "kind,op,dtype,m,n,k,batch,heads,seq,head_dim,causal,bytes,ranks,median_s,p10_s,p90_s,reps\n";
  for (size_t i = 0; i < measurements_.size(); ++i) {
    const auto& m = measurements_[i];
    const auto& s = spreads_[i];
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{}\n", calibration::to_string(m.kind),
                       m.op, m.dtype, m.m, m.n, m.k, m.batch, m.heads, m.seq, m.head_dim, m.causal ? 1 : 0, m.bytes,
                       m.ranks, m.seconds, s.p10_s, s.p90_s, s.reps);
  }
  file.commit();
}

}  // namespace hetsim::suite

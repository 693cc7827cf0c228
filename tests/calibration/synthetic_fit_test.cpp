// Fits on SYNTHETIC measurements drawn from known curves: the fit must recover the parameters.
#include <doctest/doctest.h>

#include <cmath>

#include "models/calibration/fit_profile.hpp"

using namespace hetsim::calibration;

namespace {
Measurement collective(const std::string& op, double bytes, int ranks, double seconds) {
  Measurement m;
  m.kind = OpKind::kCollective;
  m.op = op;
  m.bytes = bytes;
  m.ranks = ranks;
  m.seconds = seconds;
  return m;
}
}  // namespace

TEST_CASE("synthetic all-reduce: alpha-beta fit recovers latency and bus bandwidth") {
  // Known curve: t = 25 us + S * 2(n-1)/n / 180 GB/s (nccl-tests' bus bandwidth for all-reduce).
  const double alpha = 25e-6, busbw = 180e9;
  std::vector<Measurement> ms;
  for (double s = 4096; s <= (1ull << 30); s *= 2) {
    ms.push_back(collective("all_reduce", s, 8, alpha + s * 2.0 * 7 / 8 / busbw));
  }
  const Profile p = fit_profile(ms, GpuInfo{});
  const TransferFit& f = p.data().collectives.at("all_reduce").at(0);
  CHECK(f.fit.alpha_s == doctest::Approx(alpha).epsilon(1e-6));
  CHECK(f.fit.rate == doctest::Approx(busbw).epsilon(1e-6));
  // Outside the measured sizes the fit extrapolates: 4 GiB.
  const double big = 4.0 * (1ull << 30);
  CHECK(*p.collective_seconds("all_reduce", big, 8) == doctest::Approx(alpha + big * 1.75 / busbw).epsilon(1e-9));
  CHECK_FALSE(p.collective_seconds("all_gather", big, 8).has_value());
}

TEST_CASE("synthetic GEMM: time from a known efficiency curve is interpolated in log m and across (n, k)") {
  // Known curve: achieved FLOP/s = 800e12 * m / (m + 256) (a saturating efficiency), for shapes
  // (n, k) in {1024, 4096, 16384}^2. Query an unmeasured m and an unmeasured (n, k).
  const auto seconds = [](double m, double n, double k) { return 2 * m * n * k / (800e12 * m / (m + 256)); };
  std::vector<Measurement> ms;
  for (double n : {1024.0, 4096.0, 16384.0}) {
    for (double k : {1024.0, 4096.0, 16384.0}) {
      for (double m = 64; m <= 65536; m *= 2) {
        Measurement g;
        g.kind = OpKind::kGemm;
        g.op = "gemm";
        g.dtype = "bf16";
        g.m = m;
        g.n = n;
        g.k = k;
        g.seconds = seconds(m, n, k);
        ms.push_back(g);
      }
    }
  }
  const Profile p = fit_profile(ms, GpuInfo{});
  CHECK(*p.gemm_seconds(4096, 4096, 4096, hetsim::Dtype::kBf16) == doctest::Approx(seconds(4096, 4096, 4096)));
  // m between grid points: log-log interpolation of a smooth curve, within 2%.
  CHECK(*p.gemm_seconds(3000, 4096, 4096, "bf16") == doctest::Approx(seconds(3000, 4096, 4096)).epsilon(0.02));
  // (n, k) between measured shapes: efficiency depends only on m here, so the blend is exact to 1e-9.
  CHECK(*p.gemm_seconds(3000, 6000, 2500, "bf16") == doctest::Approx(seconds(3000, 6000, 2500)).epsilon(0.02));
  CHECK_FALSE(p.gemm_seconds(3000, 6000, 2500, hetsim::Dtype::kFp8).has_value());
}

TEST_CASE("synthetic memory-bound and copies: bandwidth curves and alpha-beta recovered") {
  // rmsnorm: t = 3 us + bytes / 3.0 TB/s; h2d_pinned: t = 8 us + bytes / 50 GB/s.
  std::vector<Measurement> ms;
  for (double b = 1 << 16; b <= (1 << 30); b *= 4) {
    Measurement r;
    r.kind = OpKind::kMemoryBound;
    r.op = "rmsnorm";
    r.bytes = b;
    r.seconds = 3e-6 + b / 3.0e12;
    ms.push_back(r);
    Measurement c;
    c.kind = OpKind::kCopy;
    c.op = "h2d_pinned";
    c.bytes = b;
    c.seconds = 8e-6 + b / 50e9;
    ms.push_back(c);
  }
  Measurement launch;
  launch.kind = OpKind::kLaunch;
  launch.op = "launch";
  launch.seconds = 2.5e-6;
  ms.push_back(launch);
  const Profile p = fit_profile(ms, GpuInfo{});
  CHECK(p.data().copies.at("h2d_pinned").fit.alpha_s == doctest::Approx(8e-6).epsilon(1e-6));
  CHECK(p.data().copies.at("h2d_pinned").fit.rate == doctest::Approx(50e9).epsilon(1e-6));
  const double mid = 3.0 * (1 << 20);
  CHECK(*p.memory_bound_seconds("rmsnorm", mid) == doctest::Approx(3e-6 + mid / 3.0e12).epsilon(0.05));
  CHECK(*p.launch_overhead_seconds() == doctest::Approx(2.5e-6));
  CHECK_FALSE(p.memory_bound_seconds("softmax", mid).has_value());
}

TEST_CASE("profile JSON round trip keeps every lookup") {
  std::vector<Measurement> ms;
  for (double s = 4096; s <= (1 << 24); s *= 4) ms.push_back(collective("send_recv", s, 2, 10e-6 + s / 100e9));
  const Profile p = fit_profile(ms, GpuInfo{});
  const Profile q = Profile::from_json(p.to_json(), "round_trip.json");
  CHECK(*q.collective_seconds("send_recv", 1e6, 2) == doctest::Approx(*p.collective_seconds("send_recv", 1e6, 2)));
  CHECK(q.to_json() == p.to_json());
}

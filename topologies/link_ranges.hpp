#pragma once
// Figures a real link can have, so that a typo (1e-320 Gbit/s, a latency off by 10^6) is an input
// error rather than an iteration of 10^300 s or a report of nulls. Every parser of link figures
// (node groups, WAN links, pair links, switch tiers) holds its values to these.
namespace hetsim::link_ranges {

// 1 kbit/s (slower than any network a model is trained over) to 10 Pbit/s (about 1,400x NVLink
// 5's 900 GB/s = 7.2 Tbit/s per GPU and direction, 1.8 TB/s bidirectional in NVIDIA's Blackwell
// datasheet).
inline constexpr double kMinGbps = 1e-6;
inline constexpr double kMaxGbps = 1e7;
// Up to 10 s: a geostationary satellite round trip is about 0.6 s.
inline constexpr double kMaxLatencyS = 10;
// Oversubscription of a switch tier or fabric: built fabrics run 1:1 to about 1:8; up to 1:10^6
// keeps every link's share of its bandwidth within the range above.
inline constexpr double kMaxOversubscription = 1e6;
// WAN egress price: cloud list prices are cents per GB; up to $1,000 per GB.
inline constexpr double kMaxEgressUsdPerGB = 1e3;

}  // namespace hetsim::link_ranges

#pragma once
// The vocabulary of units every folder shares. Simulated time is a double in seconds, used
// everywhere; sizes are bytes (double where they enter rates, uint64 never mixed in); compute is
// FLOPs. Keys in input files carry their unit in the name (`latency_us`, `bandwidth_Gbps`).

namespace hetsim::units {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kGB = 1e9;  // decimal gigabyte, as bandwidths and prices are quoted
inline constexpr double kTera = 1e12;

inline constexpr double kMicrosecond = 1e-6;
inline constexpr double kMillisecond = 1e-3;
inline constexpr double kSecondsPerHour = 3600.0;

// Gigabits per second (network links, NICs) to bytes per second.
constexpr double gbit_per_s_to_bytes(double gbps) { return gbps * 1e9 / 8.0; }
// Gigabytes per second (NVLink, HBM, PCIe as vendors quote them) to bytes per second.
constexpr double gbyte_per_s_to_bytes(double gBps) { return gBps * 1e9; }

}  // namespace hetsim::units

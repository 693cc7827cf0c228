#pragma once
// The requests a serving run answers: arrival time, prompt tokens, output tokens. Made by a
// seeded arrival process (Poisson, or gamma for burstier or smoother traffic) with uniform token
// counts, or read from a CSV trace with the public Azure LLM inference trace's columns.
#include <cstdint>
#include <string>
#include <vector>

namespace hetsim::serving {

struct Request {
  double arrival_s = 0;   // seconds of simulated time from the start of the run
  int prompt_tokens = 0;  // >= 1
  int output_tokens = 0;  // >= 1; the first comes from the prefill
};

enum class ArrivalProcess {
  kPoisson,  // exponential gaps of mean 1/rate
  kGamma,    // gamma gaps of mean 1/rate and coefficient of variation `cv` (cv = 1: Poisson)
};

// Token counts drawn uniformly from the integers min..max (min == max: fixed).
struct TokenRange {
  int min = 1;
  int max = 1;
};

// The latest simulated time a serving run may name (an arrival, an objective, a re-split): a
// year. There a double still resolves 4 ns (its ulp at 3.2e7 s is 2^-28 s), while at 1e300 s the
// latencies reported rounded to zero.
inline constexpr double kMaxServingTimeS = 365.0 * 24 * 3600;

struct SyntheticWorkload {
  ArrivalProcess process = ArrivalProcess::kPoisson;
  double rate_per_s = 1;  // mean arrivals per second
  double cv = 1;          // gamma only: standard deviation / mean of the gaps
  int requests = 1;
  TokenRange prompt{512, 512};
  TokenRange output{128, 128};
  std::uint64_t seed = 1;
};

// The first request arrives at 0, each next one a drawn gap later. Draws come from
// std::mt19937_64 through distributions written here, so a seed gives the same requests on every
// platform. Throws InputError naming the flag ("--rate", "--cv", ...) for a value out of range.
std::vector<Request> generate_workload(const SyntheticWorkload& workload);

// Reads a CSV with the columns TIMESTAMP, ContextTokens and GeneratedTokens (the Azure LLM
// inference traces, 2023 and 2024). TIMESTAMP is either "YYYY-MM-DD HH:MM:SS[.fraction]" or a
// number of seconds; arrivals are taken relative to the first row and must not decrease. Token
// counts must be integers >= 1. Throws InputError naming the file, line and column.
std::vector<Request> load_request_trace(const std::string& path);

}  // namespace hetsim::serving

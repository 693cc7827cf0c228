// Request workloads: seeded arrival processes with the moments they promise, the Azure trace
// columns, and one clear error per kind of bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/error.hpp"
#include "sim/serving/workload.hpp"

using namespace hetsim;
using namespace hetsim::serving;

namespace {

const std::string kData = std::string(HETSIM_SOURCE_DIR) + "/tests/serving/data/";

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("hetsim_serving_" + name);
  std::ofstream(path) << text;
  return path.string();
}

// Mean and coefficient of variation of the gaps between arrivals.
void gap_moments(const std::vector<Request>& rs, double& mean, double& cv) {
  double sum = 0, sum_sq = 0;
  const double n = static_cast<double>(rs.size() - 1);
  for (std::size_t i = 1; i < rs.size(); ++i) {
    const double gap = rs[i].arrival_s - rs[i - 1].arrival_s;
    sum += gap;
    sum_sq += gap * gap;
  }
  mean = sum / n;
  cv = std::sqrt(sum_sq / n - mean * mean) / mean;
}

}  // namespace

TEST_CASE("Poisson arrivals: gaps of mean 1/rate and cv 1; the seed fixes them") {
  SyntheticWorkload w;
  w.rate_per_s = 4;
  w.requests = 40000;
  w.prompt = {100, 200};
  w.output = {7, 7};
  w.seed = 42;
  const auto rs = generate_workload(w);
  double mean = 0, cv = 0;
  gap_moments(rs, mean, cv);
  INFO("mean gap " << mean << " s (expected 0.25), cv " << cv << " (expected 1)");
  // Standard error of the mean of 40k exponential gaps: 0.25 / 200 = 0.00125 s; 4 sigma.
  CHECK(mean == doctest::Approx(0.25).epsilon(0.02));
  CHECK(cv == doctest::Approx(1.0).epsilon(0.03));
  CHECK(rs.front().arrival_s == 0.0);
  int lo = 1000, hi = 0;
  for (const auto& r : rs) {
    lo = std::min(lo, r.prompt_tokens);
    hi = std::max(hi, r.prompt_tokens);
    CHECK(r.output_tokens == 7);
  }
  CHECK(lo == 100);
  CHECK(hi == 200);
  const auto again = generate_workload(w);
  CHECK(again[12345].arrival_s == rs[12345].arrival_s);
  CHECK(again[12345].prompt_tokens == rs[12345].prompt_tokens);
  w.seed = 43;
  CHECK(generate_workload(w)[12345].arrival_s != rs[12345].arrival_s);
}

TEST_CASE("gamma arrivals keep the mean gap and take the asked coefficient of variation") {
  for (const double cv_asked : {0.5, 3.0}) {
    SyntheticWorkload w;
    w.process = ArrivalProcess::kGamma;
    w.rate_per_s = 10;
    w.cv = cv_asked;
    w.requests = 60000;
    const auto rs = generate_workload(w);
    double mean = 0, cv = 0;
    gap_moments(rs, mean, cv);
    INFO("cv asked " << cv_asked << ": mean gap " << mean << " s (expected 0.1), cv " << cv);
    CHECK(mean == doctest::Approx(0.1).epsilon(0.04));
    CHECK(cv == doctest::Approx(cv_asked).epsilon(0.06));
  }
}

TEST_CASE("an Azure LLM inference trace: arrivals from the first timestamp, token columns") {
  const auto rs = load_request_trace(kData + "azure_sample.csv");
  REQUIRE(rs.size() == 4);
  CHECK(rs[0].arrival_s == 0.0);
  CHECK(rs[1].arrival_s == doctest::Approx(4.314579).epsilon(1e-9));
  CHECK(rs[3].arrival_s == doctest::Approx(13.81941).epsilon(1e-9));
  CHECK(rs[2].prompt_tokens == 879);
  CHECK(rs[2].output_tokens == 20);
  CHECK(rs[3].output_tokens == 1);
  // Plain seconds are accepted too, and a trace crossing midnight keeps counting.
  const auto plain = load_request_trace(write_temp("plain.csv",
      "TIMESTAMP,ContextTokens,GeneratedTokens\n10.5,1,2\n12,3,4\n"));
  CHECK(plain[1].arrival_s == 1.5);
  const auto midnight = load_request_trace(write_temp("midnight.csv",
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-12-31 23:59:59.5,1,2\n2024-01-01 00:00:00.25,3,4\n"));
  CHECK(midnight[1].arrival_s == doctest::Approx(0.75));
}

TEST_CASE("bad traces are refused naming the file, line and column") {
  const auto refuse = [](const std::string& name, const std::string& text, const std::string& expected) {
    const std::string path = write_temp(name, text);
    try {
      load_request_trace(path);
      FAIL("accepted " << name);
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(path) == 0);
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
    }
  };
  refuse("missing_column.csv", "TIMESTAMP,ContextTokens,GenTokens\n0,1,2\n", "GeneratedTokens");
  refuse("no_rows.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n", "at least one request");
  refuse("bad_time.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-01 00:00:00,1,2\n",
         "line 2, column \"TIMESTAMP\": got 2023-13-01 00:00:00; expected a time");
  refuse("zero_tokens.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,0,2\n",
         "column \"ContextTokens\": got 0; expected an integer token count from 1");
  refuse("fraction_tokens.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,2.5\n",
         "column \"GeneratedTokens\": got 2.5");
  refuse("huge_tokens.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,5,99999999999999999999\n",
         "GeneratedTokens");
  refuse("backwards.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n5,1,2\n4,1,2\n",
         "line 3, column \"TIMESTAMP\": got 4; expected arrival times that do not decrease");
  refuse("ragged.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n5,1\n", "");
  // An arrival at 1e300 s used to give "0.000 requests/s" and latencies rounded to zero.
  refuse("far.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0,1,2\n1e300,1,2\n",
         "line 3, column \"TIMESTAMP\": got 1e300; expected arrivals within 365 days of the first");
  CHECK_THROWS_AS(load_request_trace(kData + "no_such_file.csv"), InputError);
}

TEST_CASE("synthetic workload options out of range name their flag") {
  const auto refuse = [](SyntheticWorkload w, const std::string& expected) {
    try {
      generate_workload(w);
      FAIL("accepted " << expected);
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
    }
  };
  SyntheticWorkload w;
  w.rate_per_s = 0;
  refuse(w, "command line: --rate: got 0; expected a positive number");
  w = {};
  w.rate_per_s = std::nan("");
  refuse(w, "--rate");
  // --rate 1e-300 used to print p50/p90/p99 of 0.00 ms beside means of 0.37 ms and more.
  w = {};
  w.rate_per_s = 1e-300;
  w.requests = 2;
  refuse(w, "--rate: got 1e-300; expected a rate at which 2 requests arrive within 365 days");
  w = {};
  w.process = ArrivalProcess::kGamma;
  w.cv = -1;
  refuse(w, "--cv: got -1");
  w = {};
  w.requests = 0;
  refuse(w, "--requests: got 0");
  w = {};
  w.prompt = {10, 5};
  refuse(w, "--prompt-tokens: got 10:5");
  w = {};
  w.output = {0, 5};
  refuse(w, "--output-tokens: got 0:5");
}

#include "sim/serving/workload.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <random>

#include "base/error.hpp"
#include "models/calibration/csv_table.hpp"
#include "sim/serving/random_draws.hpp"

namespace hetsim::serving {

namespace {

// Far above any context window of a shipped model (Llama 3: 131,072 tokens), far below int's range.
constexpr int kMaxTokens = 1'000'000;
// Ten million requests hold 160 MB of Request records: the most a run is allowed to ask for.
constexpr int kMaxRequests = 10'000'000;
constexpr const char* kFlags = "command line";

void check_range(const TokenRange& range, const char* flag) {
  if (range.min < 1 || range.max > kMaxTokens || range.min > range.max)
    throw InputError(kFlags, flag, fmt::format("{}:{}", range.min, range.max),
                     fmt::format("token counts MIN[:MAX] with 1 <= MIN <= MAX <= {}", kMaxTokens));
}

}  // namespace

std::vector<Request> generate_workload(const SyntheticWorkload& w) {
  if (!(std::isfinite(w.rate_per_s) && w.rate_per_s > 0))
    throw InputError(kFlags, "--rate", fmt::format("{}", w.rate_per_s), "a positive number of requests per second");
  if (w.process == ArrivalProcess::kGamma && !(std::isfinite(w.cv) && w.cv > 0 && w.cv <= 100))
    throw InputError(kFlags, "--cv", fmt::format("{}", w.cv), "a coefficient of variation in (0, 100]");
  if (w.requests < 1 || w.requests > kMaxRequests)
    throw InputError(kFlags, "--requests", std::to_string(w.requests), fmt::format("1 to {} requests", kMaxRequests));
  check_range(w.prompt, "--prompt-tokens");
  check_range(w.output, "--output-tokens");

  std::mt19937_64 rng(w.seed);
  const double mean_gap = 1.0 / w.rate_per_s;
  // Gamma gaps of mean 1/rate and coefficient of variation cv: shape 1/cv^2, scale mean * cv^2.
  const double shape = 1.0 / (w.cv * w.cv);
  std::vector<Request> requests;
  requests.reserve(static_cast<std::size_t>(w.requests));
  double t = 0;
  for (int i = 0; i < w.requests; ++i) {
    if (i > 0) {
      t += w.process == ArrivalProcess::kPoisson ? exponential(rng, mean_gap)
                                                 : gamma_unit_scale(rng, shape) * mean_gap / shape;
      if (t > kMaxServingTimeS)
        throw InputError(kFlags, "--rate", fmt::format("{}", w.rate_per_s),
                         fmt::format("a rate at which {} requests arrive within 365 days (request {} "
                                     "arrived at {:.3g} s)",
                                     w.requests, i + 1, t));
    }
    Request r;
    r.arrival_s = t;
    r.prompt_tokens = uniform_int(rng, w.prompt.min, w.prompt.max);
    r.output_tokens = uniform_int(rng, w.output.min, w.output.max);
    requests.push_back(r);
  }
  return requests;
}

namespace {

bool parse_digits(std::string_view text, long long& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Days from 1970-01-01 to a proleptic Gregorian date (the civil-calendar algorithm: eras of
// 400 years, March-based years so that the leap day ends the year).
long long days_from_civil(long long y, long long m, long long d) {
  y -= m <= 2 ? 1 : 0;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// A time as whole seconds and a fraction, kept apart so that differences between times of the same
// day keep their sub-microsecond digits (a double holding seconds since 1970 resolves 0.2 us).
struct Timestamp {
  long long whole = 0;
  double fraction = 0;
  double minus(const Timestamp& o) const { return static_cast<double>(whole - o.whole) + (fraction - o.fraction); }
  bool before(const Timestamp& o) const { return whole < o.whole || (whole == o.whole && fraction < o.fraction); }
};

// "YYYY-MM-DD HH:MM:SS[.fraction]" as seconds since 1970 (no time zone: only differences are
// used), or a plain number of seconds. False when the text is neither.
bool parse_timestamp(const std::string& text, Timestamp& seconds) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  double plain = 0;
  const auto [plain_end, plain_ec] = std::from_chars(begin, end, plain);
  if (plain_ec == std::errc() && plain_end == end) {
    seconds = {0, plain};
    return std::isfinite(plain);
  }
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') ||
      text[13] != ':' || text[16] != ':')
    return false;
  long long year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  const std::string_view v(text);
  if (!parse_digits(v.substr(0, 4), year) || !parse_digits(v.substr(5, 2), month) ||
      !parse_digits(v.substr(8, 2), day) || !parse_digits(v.substr(11, 2), hour) ||
      !parse_digits(v.substr(14, 2), minute) || !parse_digits(v.substr(17, 2), second))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return false;
  double fraction = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20) return false;
    long long digits = 0;
    const std::string_view rest = v.substr(20);
    if (rest.size() > 12 || !parse_digits(rest, digits)) return false;
    fraction = static_cast<double>(digits) / std::pow(10.0, static_cast<double>(rest.size()));
  }
  seconds = {days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second, fraction};
  return true;
}

int token_count(const calibration::CsvTable& table, std::size_t row, std::size_t column) {
  long long value = 0;
  if (!parse_digits(table.row(row)[column], value) || value < 1 || value > kMaxTokens)
    throw InputError(table.file(), table.where(row, column), table.row(row)[column],
                     fmt::format("an integer token count from 1 to {}", kMaxTokens));
  return static_cast<int>(value);
}

}  // namespace

std::vector<Request> load_request_trace(const std::string& path) {
  const calibration::CsvTable table = calibration::CsvTable::read(path);
  const std::size_t time_column = table.column("TIMESTAMP");
  const std::size_t prompt_column = table.column("ContextTokens");
  const std::size_t output_column = table.column("GeneratedTokens");
  if (table.row_count() == 0)
    throw InputError(path, "line 2", "no rows", "at least one request after the header");
  if (table.row_count() > static_cast<std::size_t>(kMaxRequests))
    throw InputError(path, "", fmt::format("{} rows", table.row_count()),
                     fmt::format("at most {} requests", kMaxRequests));
  std::vector<Request> requests;
  requests.reserve(table.row_count());
  Timestamp first, previous;
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    Timestamp t;
    if (!parse_timestamp(table.row(row)[time_column], t))
      throw InputError(path, table.where(row, time_column), table.row(row)[time_column],
                       "a time \"YYYY-MM-DD HH:MM:SS[.fraction]\" or a number of seconds");
    if (row == 0) first = t;
    if (row > 0 && t.before(previous))
      throw InputError(path, table.where(row, time_column), table.row(row)[time_column],
                       "arrival times that do not decrease (sort the trace by TIMESTAMP)");
    previous = t;
    Request r;
    r.arrival_s = t.minus(first);
    if (r.arrival_s > kMaxServingTimeS)
      throw InputError(path, table.where(row, time_column), table.row(row)[time_column],
                       "arrivals within 365 days of the first");
    r.prompt_tokens = token_count(table, row, prompt_column);
    r.output_tokens = token_count(table, row, output_column);
    requests.push_back(r);
  }
  return requests;
}

}  // namespace hetsim::serving

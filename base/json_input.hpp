#pragma once
// Reading user JSON with errors that name the file, the JSON path, the value and what was
// expected. Every loader (clusters, GPUs, models, timetables) reads through JsonInput so that
// messages look the same everywhere.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hetsim {

// How deep arrays and objects may nest in any JSON input, traces included: hetsim's own inputs
// are a handful of levels deep, and the bound keeps every recursive walk of a document (copying,
// rendering, destroying) far from the stack's end.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses a whole file. Throws InputError for an unreadable file or text that is not JSON.
nlohmann::json read_json_file(const std::string& path);

// `key` as one reference token of a JSON pointer (RFC 6901: "~" as "~0", "/" as "~1").
std::string escape_pointer_token(const std::string& key);

// The closest of `candidates` to `word` by edit distance, or "" when none is close enough to be
// a plausible typo.
std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates);

// A view of one JSON value together with where it came from (file and JSON pointer path).
class JsonInput {
 public:
  JsonInput(const nlohmann::json& value, std::string file, std::string path = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  bool has(const std::string& key) const;

  // Children. Missing required members and wrong types throw InputError.
  JsonInput at(const std::string& key) const;
  JsonInput at(std::size_t index) const;
  std::size_t array_size() const;  // requires an array

  // Typed reads of a member.
  std::string string(const std::string& key) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  double number(const std::string& key) const;
  double number_or(const std::string& key, double fallback) const;
  double positive(const std::string& key) const;       // > 0
  double non_negative(const std::string& key) const;   // >= 0
  double non_negative_or(const std::string& key, double fallback) const;
  double between(const std::string& key, double low, double high) const;  // low <= v <= high
  long long integer(const std::string& key) const;
  long long integer_or(const std::string& key, long long fallback) const;
  long long positive_integer(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;

  // Requires an object whose keys are all in `known`; an unknown key is an error that suggests
  // the nearest known one. Free-text notes ("source", "description") must be strings.
  void reject_unknown_keys(std::initializer_list<std::string_view> known) const;

  // Throws InputError for this value with the given expectation.
  [[noreturn]] void fail(const std::string& expected) const;
  [[noreturn]] void fail_member(const std::string& key, const std::string& expected) const;

 private:
  const nlohmann::json& require_member(const std::string& key) const;
  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
};

}  // namespace hetsim

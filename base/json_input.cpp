#include "base/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.hpp"
#include "base/input_file.hpp"

namespace hetsim {

namespace {

// Short rendering of a value for messages, at most kMax characters: long arrays and objects are
// elided. Written without json::dump(), whose recursion and whole-document output would make a
// huge or deeply nested value cost as much to describe as to read.
constexpr std::size_t kMaxRendered = 60;

void render_into(const nlohmann::json& v, std::string& out) {
  if (out.size() > kMaxRendered) return;
  if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& element : v) {
      if (out.size() > kMaxRendered) return;
      if (!first) out += ',';
      first = false;
      render_into(element, out);
    }
    out += ']';
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, member] : v.items()) {
      if (out.size() > kMaxRendered) return;
      if (!first) out += ',';
      first = false;
      out += nlohmann::json(key).dump();
      out += ':';
      render_into(member, out);
    }
    out += '}';
  } else {
    out += v.dump();
  }
}

std::string render(const nlohmann::json& v) {
  std::string text;
  render_into(v, text);
  if (text.size() > kMaxRendered) text = text.substr(0, kMaxRendered) + "...";
  return text;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

namespace {

// Builds the document through nlohmann's SAX interface, refusing a repeated key (rather than
// letting the last one silently win), nesting deeper than kMaxJsonDepth (which keeps every later
// recursive walk of the document bounded) and numbers beyond double range. Written as a SAX
// handler rather than the DOM parser's callback, which rescans the enclosing array or object
// after every element and so makes a long array of objects quadratic; a repeated key is found by
// the object's own map, not by a scan of the keys before it.
class CheckedDocumentBuilder {
 public:
  using json = nlohmann::json;

  explicit CheckedDocumentBuilder(const std::string& file) : file_(file) {}

  json take() { return std::move(root_); }

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(json(v)); }
  bool string(json::string_t& v) { return add(json(std::move(v))); }
  bool binary(json::binary_t& v) { return add(json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(json::object(), true); }
  bool start_array(std::size_t) { return open(json::array(), false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    // The object's own map says whether the key is new; the member is created empty here and
    // filled when its value arrives.
    Frame& frame = frames_.back();
    auto [member, inserted] = frame.value->get_ref<json::object_t&>().emplace(std::move(k), nullptr);
    frame.key = &member->first;
    frame.member = &member->second;
    if (!inserted)
      throw InputError(file_, pointer(frames_.size()), "a key repeated in its object",
                       "each key at most once");
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const json::exception& error) {
    // The parser's only range error (id 406): a number literal beyond double range, such as 1e400.
    if (error.id == 406)
      throw InputError(file_, pointer(frames_.size()),
                       "a number beyond the range of a double (about 1.8e308)",
                       "numbers a double can hold");
    throw InputError(file_, "", fmt::format("text that is not JSON (byte {})", position),
                     "a JSON document");
  }

 private:
  struct Frame {
    json* value = nullptr;
    bool object = false;
    std::size_t elements = 0;              // array: elements finished so far
    const std::string* key = nullptr;      // object: the member being parsed...
    json* member = nullptr;                // ...and where its value goes
  };

  // Where the value being parsed sits, as a JSON pointer `levels` frames deep.
  std::string pointer(std::size_t levels) const {
    std::string out;
    for (std::size_t i = 0; i < levels; ++i) {
      out += '/';
      out += frames_[i].object ? escape_pointer_token(*frames_[i].key)
                               : std::to_string(frames_[i].elements);
    }
    return out;
  }

  // Places `v` in its parent (or as the root) and returns where it now lives.
  json* place(json&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& parent = frames_.back();
    if (parent.object) {
      *parent.member = std::move(v);
      return parent.member;
    }
    parent.value->push_back(std::move(v));
    ++parent.elements;
    return &parent.value->back();
  }

  bool add(json&& v) {
    place(std::move(v));
    return true;
  }

  bool open(json&& empty, bool object) {
    if (frames_.size() >= kMaxJsonDepth)
      throw InputError(file_, pointer(frames_.size()),
                       fmt::format("nesting deeper than {} levels", kMaxJsonDepth),
                       "a JSON document nested at most that deep");
    // An array's element counts as finished when placed, so a message about an element inside
    // it names its index: take the count back until it closes.
    json* value = place(std::move(empty));
    if (!frames_.empty() && !frames_.back().object) --frames_.back().elements;
    frames_.push_back(Frame{value, object, 0, nullptr, nullptr});
    return true;
  }

  bool close() {
    frames_.pop_back();
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().elements;
    return true;
  }

  const std::string& file_;
  json root_;
  std::vector<Frame> frames_;
};

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = read_input_file(path, "JSON file");
  CheckedDocumentBuilder builder(path);
  nlohmann::json::sax_parse(text, &builder);
  return builder.take();
}

std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

JsonInput::JsonInput(const nlohmann::json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

bool JsonInput::has(const std::string& key) const {
  return value_->is_object() && value_->contains(key);
}

void JsonInput::fail(const std::string& expected) const {
  throw InputError(file_, path_, render(*value_), expected);
}

void JsonInput::fail_member(const std::string& key, const std::string& expected) const {
  at(key).fail(expected);
}

const nlohmann::json& JsonInput::require_member(const std::string& key) const {
  if (!value_->is_object()) fail("an object with member \"" + key + "\"");
  auto it = value_->find(key);
  if (it == value_->end())
    throw InputError(file_, path_ + "/" + escape_pointer_token(key), "nothing (missing)",
                     "a value for required member \"" + key + "\"");
  return *it;
}

JsonInput JsonInput::at(const std::string& key) const {
  return JsonInput(require_member(key), file_, path_ + "/" + escape_pointer_token(key));
}

JsonInput JsonInput::at(std::size_t index) const {
  if (!value_->is_array()) fail("an array");
  if (index >= value_->size()) fail(fmt::format("an array with at least {} elements", index + 1));
  return JsonInput((*value_)[index], file_, fmt::format("{}/{}", path_, index));
}

std::size_t JsonInput::array_size() const {
  if (!value_->is_array()) fail("an array");
  return value_->size();
}

std::string JsonInput::string(const std::string& key) const {
  const JsonInput child = at(key);
  if (!child.value().is_string()) child.fail("a string");
  return child.value().get<std::string>();
}

std::string JsonInput::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

double JsonInput::number(const std::string& key) const {
  const JsonInput child = at(key);
  if (!child.value().is_number()) child.fail("a number");
  const double v = child.value().get<double>();
  if (!std::isfinite(v)) child.fail("a finite number");
  return v;
}

double JsonInput::number_or(const std::string& key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

double JsonInput::positive(const std::string& key) const {
  const double v = number(key);
  if (!(v > 0)) at(key).fail("a number > 0");
  return v;
}

double JsonInput::non_negative(const std::string& key) const {
  const double v = number(key);
  if (!(v >= 0)) at(key).fail("a number >= 0");
  return v;
}

double JsonInput::between(const std::string& key, double low, double high) const {
  const double v = number(key);
  if (!(v >= low && v <= high)) at(key).fail(fmt::format("a number between {:g} and {:g}", low, high));
  return v;
}

double JsonInput::non_negative_or(const std::string& key, double fallback) const {
  return has(key) ? non_negative(key) : fallback;
}

long long JsonInput::integer(const std::string& key) const {
  const JsonInput child = at(key);
  const auto& v = child.value();
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<long long>(d);
  }
  child.fail("an integer");
}

long long JsonInput::integer_or(const std::string& key, long long fallback) const {
  return has(key) ? integer(key) : fallback;
}

long long JsonInput::positive_integer(const std::string& key) const {
  const long long v = integer(key);
  if (v <= 0) at(key).fail("an integer > 0");
  return v;
}

bool JsonInput::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const JsonInput child = at(key);
  if (!child.value().is_boolean()) child.fail("true or false");
  return child.value().get<bool>();
}

void JsonInput::reject_unknown_keys(std::initializer_list<std::string_view> known) const {
  if (!value_->is_object()) fail("an object");
  std::vector<std::string> names(known.begin(), known.end());
  for (const auto& [key, unused] : value_->items()) {
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    const std::string suggestion = nearest_word(key, names);
    std::string expected = suggestion.empty()
                               ? "one of the known keys"
                               : "a known key; did you mean \"" + suggestion + "\"?";
    throw InputError(file_, path_ + "/" + escape_pointer_token(key), "unknown key \"" + key + "\"",
                     expected);
  }
  // Free-text notes are strings: a note of another type is a value put in the wrong place.
  for (const std::string note : {"source", "description"})
    if (has(note) && !value_->at(note).is_string()) at(note).fail("a string");
}

}  // namespace hetsim

#include "traces/trace_validator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim {

namespace {

using nlohmann::json;

// Slices closer than this (microseconds) count as touching, not overlapping: the writer rounds
// start and end to the nanosecond.
constexpr double kNestingToleranceUs = 1e-3;

constexpr std::string_view kPhases = "BEXiICbnestfPNODMVvRc()";
constexpr const char* kPhaseExpectation =
    "a trace event phase (one of B E X i I C b n e s t f P N O D M V v R c ( ))";

// Short rendering of a value for messages: long arrays and objects are elided.
std::string render(const json& value) {
  std::string text = value.dump();
  constexpr std::size_t kMax = 60;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

std::string pointer_token(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// A slice's extent in microseconds and the index of the event that made it.
struct Interval {
  double start_us;
  double end_us;
  std::size_t event;
};

struct OpenBegin {
  double ts_us;
  std::size_t event;
};

struct ThreadState {
  bool named = false;
  std::size_t first_slice_event = 0;
  bool has_slices = false;
  std::vector<Interval> slices;
  std::vector<OpenBegin> open;  // B events awaiting their E, innermost last
};

struct ProcessState {
  bool named = false;
  std::size_t first_use_event = 0;
  std::string pid_text;
};

// A flow end seen in the file whose partner has not been seen yet.
struct PendingFlow {
  std::size_t event;
};

// pid and tid may be integers or strings (Perfetto accepts both); keyed by their JSON text.
using ThreadKey = std::pair<std::string, std::string>;

class TraceChecker {
 public:
  explicit TraceChecker(std::string file) : file_(std::move(file)) {}

  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  std::string event_path(std::size_t index) const { return prefix_ + "/" + std::to_string(index); }

  [[noreturn]] void fail(const std::string& path, const std::string& value,
                         const std::string& expected) const {
    throw InputError(file_, path, value, expected);
  }

  void check_event(const json& event, std::size_t index);
  TraceSummary finish();

 private:
  const json& member(const json& event, std::size_t index, const char* key,
                     const char* expected) const;
  std::string string_member(const json& event, std::size_t index, const char* key) const;
  double number_member(const json& event, std::size_t index, const char* key,
                       const char* expected) const;
  std::string id_member(const json& event, std::size_t index, const char* key) const;

  ProcessState& use_process(const std::string& pid, std::size_t index);
  ThreadState& thread(const std::string& pid, const std::string& tid, std::size_t index);
  ThreadState& slice_thread(const json& event, std::size_t index);

  void check_metadata(const json& event, std::size_t index, const std::string& pid);
  void check_flows(const json& event, std::size_t index);
  void add_flow_end(std::uint64_t id, std::size_t index, bool out);
  void check_nesting(const ThreadKey& key, std::vector<Interval>& slices) const;

  std::string file_;
  std::string prefix_;
  TraceSummary summary_;
  std::map<std::string, ProcessState> processes_;
  std::map<ThreadKey, ThreadState> threads_;
  std::unordered_map<std::uint64_t, PendingFlow> pending_out_;
  std::unordered_map<std::uint64_t, PendingFlow> pending_in_;
};

const json& TraceChecker::member(const json& event, std::size_t index, const char* key,
                                 const char* expected) const {
  const auto it = event.find(key);
  if (it == event.end()) fail(event_path(index) + "/" + key, "nothing", expected);
  return *it;
}

std::string TraceChecker::string_member(const json& event, std::size_t index,
                                        const char* key) const {
  const json& value = member(event, index, key, "a string");
  if (!value.is_string()) fail(event_path(index) + "/" + key, render(value), "a string");
  return value.get<std::string>();
}

double TraceChecker::number_member(const json& event, std::size_t index, const char* key,
                                   const char* expected) const {
  const json& value = member(event, index, key, expected);
  if (!value.is_number()) fail(event_path(index) + "/" + key, render(value), expected);
  return value.get<double>();
}

std::string TraceChecker::id_member(const json& event, std::size_t index, const char* key) const {
  constexpr const char* kExpected = "an integer or string id";
  const json& value = member(event, index, key, kExpected);
  if (!value.is_number_integer() && !value.is_string()) {
    fail(event_path(index) + "/" + key, render(value), kExpected);
  }
  return value.dump();
}

ProcessState& TraceChecker::use_process(const std::string& pid, std::size_t index) {
  const auto [it, inserted] = processes_.try_emplace(pid);
  if (inserted) {
    it->second.first_use_event = index;
    it->second.pid_text = pid;
  }
  return it->second;
}

ThreadState& TraceChecker::thread(const std::string& pid, const std::string& tid,
                                  std::size_t index) {
  const auto [it, inserted] = threads_.try_emplace(ThreadKey{pid, tid});
  if (inserted) it->second.first_slice_event = index;
  return it->second;
}

// The thread of a slice event (X, B or E): pid and tid checked, the process used, and the thread
// marked as holding slices from this event on.
ThreadState& TraceChecker::slice_thread(const json& event, std::size_t index) {
  const std::string pid = id_member(event, index, "pid");
  const std::string tid = id_member(event, index, "tid");
  use_process(pid, index);
  ThreadState& state = thread(pid, tid, index);
  if (!state.has_slices) state.first_slice_event = index;
  state.has_slices = true;
  return state;
}

void TraceChecker::check_event(const json& event, std::size_t index) {
  ++summary_.events;
  if (!event.is_object()) fail(event_path(index), render(event), "an event object");
  const json& ph = member(event, index, "ph", kPhaseExpectation);
  if (!ph.is_string() || ph.get_ref<const std::string&>().size() != 1 ||
      kPhases.find(ph.get_ref<const std::string&>()[0]) == std::string_view::npos) {
    fail(event_path(index) + "/ph", render(ph), kPhaseExpectation);
  }
  const char phase = ph.get_ref<const std::string&>()[0];

  switch (phase) {
    case 'X': {
      string_member(event, index, "name");
      const double ts = number_member(event, index, "ts", "a number of microseconds");
      const double dur = number_member(event, index, "dur", "a number of microseconds >= 0");
      if (dur < 0.0) {
        fail(event_path(index) + "/dur", render(event["dur"]), "a number of microseconds >= 0");
      }
      ThreadState& state = slice_thread(event, index);
      state.slices.push_back(Interval{ts, ts + dur, index});
      ++summary_.slices;
      check_flows(event, index);
      break;
    }
    case 'B':
    case 'E': {
      const double ts = number_member(event, index, "ts", "a number of microseconds");
      ThreadState& state = slice_thread(event, index);
      if (phase == 'B') {
        state.open.push_back(OpenBegin{ts, index});
        check_flows(event, index);
        break;
      }
      if (state.open.empty()) {
        fail(event_path(index),
             fmt::format("an E event with no open B on pid {}, tid {}", id_member(event, index, "pid"),
                         id_member(event, index, "tid")),
             "a B event on the same thread before it");
      }
      const OpenBegin begin = state.open.back();
      state.open.pop_back();
      if (ts < begin.ts_us) {
        fail(event_path(index) + "/ts", render(event["ts"]),
             fmt::format("a time >= {} us, the ts of its B event {}", begin.ts_us,
                         event_path(begin.event)));
      }
      state.slices.push_back(Interval{begin.ts_us, ts, begin.event});
      ++summary_.slices;
      break;
    }
    case 'C': {
      string_member(event, index, "name");
      number_member(event, index, "ts", "a number of microseconds");
      use_process(id_member(event, index, "pid"), index);
      const json& args = member(event, index, "args", "an object of numeric series");
      if (!args.is_object()) {
        fail(event_path(index) + "/args", render(args), "an object of numeric series");
      }
      for (const auto& [series, value] : args.items()) {
        if (!value.is_number()) {
          fail(event_path(index) + "/args/" + pointer_token(series), render(value), "a number");
        }
      }
      ++summary_.counters;
      break;
    }
    case 'M': check_metadata(event, index, id_member(event, index, "pid")); break;
    case 'i':
    case 'I':
    case 'R': {
      string_member(event, index, "name");
      number_member(event, index, "ts", "a number of microseconds");
      use_process(id_member(event, index, "pid"), index);
      const auto scope = event.find("s");
      const bool thread_scoped = scope == event.end() || *scope == "t";
      if (scope != event.end() && *scope != "g" && *scope != "p" && *scope != "t") {
        fail(event_path(index) + "/s", render(*scope), "\"g\", \"p\" or \"t\"");
      }
      if (thread_scoped) id_member(event, index, "tid");
      break;
    }
    case 'b':
    case 'n': {
      if (const auto pid = event.find("pid"); pid != event.end()) {
        use_process(id_member(event, index, "pid"), index);
      }
      check_flows(event, index);
      break;
    }
    default:
      // Other phases (flow v1, async ends, objects, samples) are accepted as Perfetto accepts
      // them; their pid still needs a name.
      if (const auto pid = event.find("pid"); pid != event.end()) {
        use_process(id_member(event, index, "pid"), index);
      }
      break;
  }
}

void TraceChecker::check_metadata(const json& event, std::size_t index, const std::string& pid) {
  const std::string name = string_member(event, index, "name");
  ProcessState& process = use_process(pid, index);
  const bool is_name = name == "process_name" || name == "thread_name";
  const bool is_sort = name == "process_sort_index" || name == "thread_sort_index";
  if (!is_name && !is_sort) return;  // other metadata (labels, uptime) carries no rule here
  const bool for_thread = name == "thread_name" || name == "thread_sort_index";
  const std::string tid = for_thread ? id_member(event, index, "tid") : std::string();
  const json& args = member(event, index, "args", "an object");
  if (!args.is_object()) fail(event_path(index) + "/args", render(args), "an object");
  if (is_name) {
    const auto value = args.find("name");
    if (value == args.end()) fail(event_path(index) + "/args/name", "nothing", "a string");
    if (!value->is_string()) fail(event_path(index) + "/args/name", render(*value), "a string");
    if (for_thread) {
      thread(pid, tid, index).named = true;
    } else {
      process.named = true;
    }
  } else {
    const auto value = args.find("sort_index");
    if (value == args.end()) fail(event_path(index) + "/args/sort_index", "nothing", "an integer");
    if (!value->is_number_integer()) {
      fail(event_path(index) + "/args/sort_index", render(*value), "an integer");
    }
  }
}

void TraceChecker::check_flows(const json& event, std::size_t index) {
  const auto bind_id = event.find("bind_id");
  const auto flow_out = event.find("flow_out");
  const auto flow_in = event.find("flow_in");
  for (const auto& [it, key] : {std::pair{flow_out, "flow_out"}, std::pair{flow_in, "flow_in"}}) {
    if (it != event.end() && !it->is_boolean()) {
      fail(event_path(index) + "/" + key, render(*it), "true or false");
    }
  }
  const bool out = flow_out != event.end() && flow_out->get<bool>();
  const bool in = flow_in != event.end() && flow_in->get<bool>();
  if (!out && !in) return;
  constexpr const char* kExpected = "a flow id (an unsigned integer or a hexadecimal string)";
  if (bind_id == event.end()) fail(event_path(index) + "/bind_id", "nothing", kExpected);
  std::uint64_t id = 0;
  if (bind_id->is_number_unsigned() || (bind_id->is_number_integer() && *bind_id >= 0)) {
    id = bind_id->get<std::uint64_t>();
  } else if (bind_id->is_string()) {
    // Perfetto reads string ids as hexadecimal ("0x" prefix optional).
    const std::string& text = bind_id->get_ref<const std::string&>();
    char* end = nullptr;
    errno = 0;
    id = std::strtoull(text.c_str(), &end, 16);
    if (text.empty() || *end != '\0' || errno != 0 || text[0] == '-' || text[0] == ' ') {
      fail(event_path(index) + "/bind_id", render(*bind_id), kExpected);
    }
  } else {
    fail(event_path(index) + "/bind_id", render(*bind_id), kExpected);
  }
  // A slice with both flags is a step: it ends one arrow and starts the next.
  if (in) add_flow_end(id, index, false);
  if (out) add_flow_end(id, index, true);
}

void TraceChecker::add_flow_end(std::uint64_t id, std::size_t index, bool out) {
  auto& partners = out ? pending_in_ : pending_out_;
  auto& same = out ? pending_out_ : pending_in_;
  if (const auto partner = partners.find(id); partner != partners.end()) {
    partners.erase(partner);
    ++summary_.flows;
    return;
  }
  const auto [it, inserted] = same.try_emplace(id, PendingFlow{index});
  if (!inserted) {
    const char* side = out ? "flow_out" : "flow_in";
    fail(event_path(index) + "/bind_id",
         fmt::format("\"0x{:x}\" on a second {} slice (the first is {})", id, side,
                     event_path(it->second.event)),
         fmt::format("exactly one {} slice per bind_id", side));
  }
}

void TraceChecker::check_nesting(const ThreadKey& key, std::vector<Interval>& slices) const {
  // Parents sort before their children: earlier start first, longer first on equal starts.
  std::sort(slices.begin(), slices.end(), [](const Interval& a, const Interval& b) {
    if (a.start_us != b.start_us) return a.start_us < b.start_us;
    if (a.end_us != b.end_us) return a.end_us > b.end_us;
    return a.event < b.event;
  });
  std::vector<const Interval*> enclosing;
  for (const Interval& slice : slices) {
    while (!enclosing.empty() && enclosing.back()->end_us <= slice.start_us + kNestingToleranceUs) {
      enclosing.pop_back();
    }
    if (!enclosing.empty() && slice.end_us > enclosing.back()->end_us + kNestingToleranceUs) {
      const Interval& parent = *enclosing.back();
      fail(event_path(slice.event),
           fmt::format("a slice [{:.3f}, {:.3f}] us on pid {}, tid {} that starts inside {} "
                       "[{:.3f}, {:.3f}] us and ends after it",
                       slice.start_us, slice.end_us, key.first, key.second,
                       event_path(parent.event), parent.start_us, parent.end_us),
           "slices on one thread to nest or not overlap");
    }
    enclosing.push_back(&slice);
  }
}

TraceSummary TraceChecker::finish() {
  // Unclosed B events, in file order.
  const OpenBegin* first_open = nullptr;
  for (const auto& [key, state] : threads_) {
    for (const OpenBegin& begin : state.open) {
      if (first_open == nullptr || begin.event < first_open->event) first_open = &begin;
    }
  }
  if (first_open != nullptr) {
    fail(event_path(first_open->event), "a B event that is never closed",
         "an E event on the same thread after it");
  }
  for (auto& [key, state] : threads_) check_nesting(key, state.slices);

  // Unmatched flow ends: report the earliest in the file.
  const std::pair<const std::uint64_t, PendingFlow>* lonely = nullptr;
  bool lonely_is_out = false;
  for (const auto& entry : pending_out_) {
    if (lonely == nullptr || entry.second.event < lonely->second.event) {
      lonely = &entry;
      lonely_is_out = true;
    }
  }
  for (const auto& entry : pending_in_) {
    if (lonely == nullptr || entry.second.event < lonely->second.event) {
      lonely = &entry;
      lonely_is_out = false;
    }
  }
  if (lonely != nullptr) {
    const char* side = lonely_is_out ? "flow_out" : "flow_in";
    const char* other = lonely_is_out ? "flow_in" : "flow_out";
    fail(event_path(lonely->second.event) + "/bind_id",
         fmt::format("\"0x{:x}\" on a {} slice that no {} slice matches", lonely->first, side,
                     other),
         fmt::format("exactly one {} slice with the same bind_id", other));
  }

  const ProcessState* unnamed_process = nullptr;
  for (const auto& [pid, state] : processes_) {
    if (!state.named &&
        (unnamed_process == nullptr || state.first_use_event < unnamed_process->first_use_event)) {
      unnamed_process = &state;
    }
  }
  if (unnamed_process != nullptr) {
    fail(event_path(unnamed_process->first_use_event) + "/pid", unnamed_process->pid_text,
         fmt::format("a process_name metadata event for pid {}", unnamed_process->pid_text));
  }
  const std::pair<const ThreadKey, ThreadState>* unnamed_thread = nullptr;
  for (const auto& entry : threads_) {
    if (entry.second.has_slices && !entry.second.named &&
        (unnamed_thread == nullptr ||
         entry.second.first_slice_event < unnamed_thread->second.first_slice_event)) {
      unnamed_thread = &entry;
    }
  }
  if (unnamed_thread != nullptr) {
    const auto& [pid, tid] = unnamed_thread->first;
    fail(event_path(unnamed_thread->second.first_slice_event) + "/tid", tid,
         fmt::format("a thread_name metadata event for pid {}, tid {}", pid, tid));
  }
  summary_.processes = processes_.size();
  summary_.threads = threads_.size();
  return summary_;
}

// SAX handler: skips everything outside the events array and builds each event, one at a time,
// as a small json value handed to the checker.
class TraceSax {
 public:
  explicit TraceSax(TraceChecker& checker) : checker_(checker) {}

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool value) { return scalar(json(value)); }
  bool number_integer(json::number_integer_t value) { return scalar(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return scalar(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) {
    return scalar(json(value));
  }
  bool string(json::string_t& value) { return scalar(json(std::move(value))); }
  bool binary(json::binary_t& value) { return scalar(json(json::binary_t(value))); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    if (!stack_.empty()) {
      key_ = std::move(name);
    } else if (depth_ == 1) {
      top_key_ = std::move(name);
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    const std::string path = events_depth_ >= 0 ? checker_.event_path(event_index_) : "";
    checker_.fail(path, fmt::format("text that is not JSON (byte {})", position),
                  "a JSON document");
  }

  // After the parse: the document must have held an events array.
  void require_events() const {
    if (!saw_events_) {
      checker_.fail("", "an object without \"traceEvents\"",
                    "an array of events or an object with a \"traceEvents\" array");
    }
  }

 private:
  bool at_trace_events_value() const {
    return depth_ == 1 && top_is_object_ && top_key_ == "traceEvents";
  }

  void add(json value) {
    json& top = *stack_.back();
    if (top.is_object()) {
      top[key_] = std::move(value);
    } else {
      top.push_back(std::move(value));
    }
  }

  bool scalar(json value) {
    if (!stack_.empty()) {
      add(std::move(value));
    } else if (depth_ == 0) {
      checker_.fail("", render(value),
                    "an array of events or an object with a \"traceEvents\" array");
    } else if (depth_ == events_depth_) {
      checker_.fail(checker_.event_path(event_index_), render(value), "an event object");
    } else if (at_trace_events_value()) {
      checker_.fail("/traceEvents", render(value), "an array of events");
    }
    return true;
  }

  bool open(json container) {
    const bool is_object = container.is_object();
    // Deeper values would be built (and rendered in messages) by recursion without bound.
    if (static_cast<std::size_t>(depth_) >= kMaxJsonDepth) {
      checker_.fail(events_depth_ >= 0 && depth_ >= events_depth_ ? checker_.event_path(event_index_) : "",
                    fmt::format("nesting deeper than {} levels", kMaxJsonDepth),
                    "a trace nested at most that deep");
    }
    if (!stack_.empty()) {
      json& top = *stack_.back();
      if (top.is_object()) {
        json& slot = top[key_];
        slot = std::move(container);
        stack_.push_back(&slot);
      } else {
        top.push_back(std::move(container));
        stack_.push_back(&top.back());
      }
    } else if (depth_ == 0) {
      top_is_object_ = is_object;
      if (!is_object) {
        events_depth_ = 1;
        saw_events_ = true;
      }
    } else if (depth_ == events_depth_) {
      event_ = std::move(container);
      stack_.push_back(&event_);
    } else if (at_trace_events_value()) {
      if (is_object) checker_.fail("/traceEvents", "an object", "an array of events");
      events_depth_ = 2;
      saw_events_ = true;
      checker_.set_prefix("/traceEvents");
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (!stack_.empty()) {
      stack_.pop_back();
      if (stack_.empty()) {
        checker_.check_event(event_, event_index_);
        ++event_index_;
        event_ = json();
      }
    } else if (depth_ + 1 == events_depth_) {
      events_depth_ = -1;  // the events array is closed; what follows is skipped
    }
    return true;
  }

  TraceChecker& checker_;
  int depth_ = 0;          // containers open around the current token
  int events_depth_ = -1;  // depth of the events array's elements; -1 outside it
  bool top_is_object_ = false;
  bool saw_events_ = false;
  std::string top_key_;  // last key read in the top-level object
  std::size_t event_index_ = 0;
  json event_;                // the event being built
  std::vector<json*> stack_;  // open containers inside event_, innermost last
  std::string key_;           // pending key inside event_
};

}  // namespace

TraceSummary validate_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "an unreadable file", "a readable trace file");
  TraceChecker checker(path);
  TraceSax sax(checker);
  json::sax_parse(in, &sax);
  sax.require_events();
  return checker.finish();
}

}  // namespace hetsim

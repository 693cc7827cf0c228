#include "traces/chrome_trace_writer.hpp"

#include <cmath>
#include <ostream>

#include "base/error.hpp"

namespace hetsim {

namespace {

// The buffer is handed to the stream once it holds this many bytes: large enough that writes are
// few, small enough to stay in cache.
constexpr std::size_t kFlushBytes = 64 * 1024;

// Longest simulated time accepted (seconds): beyond it nanoseconds overflow a long long.
constexpr double kMaxSeconds = 9.0e9;

void append(fmt::memory_buffer& out, std::string_view text) { out.append(text); }

// JSON string body: quotes, backslashes and control characters escaped; other bytes (UTF-8
// included) pass through unchanged.
void append_escaped(fmt::memory_buffer& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"': append(out, "\\\""); break;
      case '\\': append(out, "\\\\"); break;
      case '\n': append(out, "\\n"); break;
      case '\r': append(out, "\\r"); break;
      case '\t': append(out, "\\t"); break;
      case '\b': append(out, "\\b"); break;
      case '\f': append(out, "\\f"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(fmt::appender(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Simulated seconds to whole nanoseconds, rejecting what JSON or the trace viewers cannot show.
long long to_nanoseconds(double seconds, std::string_view what) {
  if (!std::isfinite(seconds) || seconds < 0.0 || seconds > kMaxSeconds) {
    throw Error(fmt::format("trace writer: {} = {} s; expected a finite time in [0, {:g}] s", what,
                            seconds, kMaxSeconds));
  }
  return std::llround(seconds * 1e9);
}

// Nanoseconds written as microseconds with three decimals ("12.345"): fixed digits keep files
// byte-identical across platforms.
void append_microseconds(fmt::memory_buffer& out, long long nanoseconds) {
  fmt::format_to(fmt::appender(out), "{}.{:03}", nanoseconds / 1000, nanoseconds % 1000);
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(const std::string& path) : path_(path), file_(path) {
  append(buffer_, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
}

void ChromeTraceWriter::require_open() const {
  if (committed_) throw Error(path_ + ": trace already committed; no event may follow");
}

void ChromeTraceWriter::begin_event() {
  require_open();
  // One event per line keeps the file readable with line tools (head, grep, wc -l).
  append(buffer_, events_written_ == 0 ? "\n{" : ",\n{");
}

void ChromeTraceWriter::end_event() {
  buffer_.push_back('}');
  ++events_written_;
  flush_if_full();
}

void ChromeTraceWriter::flush_if_full() {
  if (buffer_.size() < kFlushBytes) return;
  file_.stream().write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
}

void ChromeTraceWriter::name_process(int pid, std::string_view name, int sort_index) {
  begin_event();
  fmt::format_to(fmt::appender(buffer_),
                 "\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":", pid);
  append_escaped(buffer_, name);
  append(buffer_, "}");
  end_event();
  begin_event();
  fmt::format_to(
      fmt::appender(buffer_),
      "\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"sort_index\":{}}}", pid,
      sort_index);
  end_event();
}

void ChromeTraceWriter::name_thread(int pid, int tid, std::string_view name, int sort_index) {
  begin_event();
  fmt::format_to(
      fmt::appender(buffer_),
      "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", pid, tid);
  append_escaped(buffer_, name);
  append(buffer_, "}");
  end_event();
  begin_event();
  fmt::format_to(fmt::appender(buffer_),
                 "\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{"
                 "\"sort_index\":{}}}",
                 pid, tid, sort_index);
  end_event();
}

void ChromeTraceWriter::slice(int pid, int tid, std::string_view name, std::string_view category,
                              double start_s, double duration_s, std::span<const TraceArg> args,
                              unsigned long long flow_out_id, unsigned long long flow_in_id) {
  if (flow_out_id != 0 && flow_in_id != 0) {
    throw Error(
        fmt::format("trace writer: slice \"{}\" has both flow_out {} and flow_in {}; "
                    "expected at most one",
                    name, flow_out_id, flow_in_id));
  }
  if (!std::isfinite(duration_s) || duration_s < 0.0) {
    throw Error(
        fmt::format("trace writer: slice \"{}\" duration = {} s; expected >= 0", name, duration_s));
  }
  // Checked before anything is written so that a throw leaves the document well-formed.
  for (const TraceArg& arg : args) {
    if (const auto* real = std::get_if<double>(&arg.value); real && !std::isfinite(*real)) {
      throw Error(
          fmt::format("trace writer: slice \"{}\" arg \"{}\" = {}; expected a finite number", name,
                      arg.key, *real));
    }
  }
  const long long start_ns = to_nanoseconds(start_s, "slice start");
  const long long end_ns = to_nanoseconds(start_s + duration_s, "slice end");
  begin_event();
  append(buffer_, "\"name\":");
  append_escaped(buffer_, name);
  append(buffer_, ",\"cat\":");
  append_escaped(buffer_, category);
  append(buffer_, ",\"ph\":\"X\",\"ts\":");
  append_microseconds(buffer_, start_ns);
  append(buffer_, ",\"dur\":");
  append_microseconds(buffer_, end_ns - start_ns);
  fmt::format_to(fmt::appender(buffer_), ",\"pid\":{},\"tid\":{}", pid, tid);
  if (!args.empty()) {
    append(buffer_, ",\"args\":{");
    bool first = true;
    for (const TraceArg& arg : args) {
      if (!first) buffer_.push_back(',');
      first = false;
      append_escaped(buffer_, arg.key);
      buffer_.push_back(':');
      if (const auto* integer = std::get_if<long long>(&arg.value)) {
        fmt::format_to(fmt::appender(buffer_), "{}", *integer);
      } else if (const auto* real = std::get_if<double>(&arg.value)) {
        fmt::format_to(fmt::appender(buffer_), "{}", *real);
      } else {
        append_escaped(buffer_, std::get<std::string_view>(arg.value));
      }
    }
    buffer_.push_back('}');
  }
  if (flow_out_id != 0) {
    fmt::format_to(fmt::appender(buffer_), ",\"bind_id\":\"0x{:x}\",\"flow_out\":true",
                   flow_out_id);
  } else if (flow_in_id != 0) {
    fmt::format_to(fmt::appender(buffer_), ",\"bind_id\":\"0x{:x}\",\"flow_in\":true", flow_in_id);
  }
  end_event();
}

void ChromeTraceWriter::counter(int pid, std::string_view name, double time_s,
                                std::string_view series, double value) {
  const long long time_ns = to_nanoseconds(time_s, "counter time");
  if (!std::isfinite(value)) {
    throw Error(fmt::format("trace writer: counter \"{}\" {} = {}; expected a finite number", name,
                            series, value));
  }
  begin_event();
  append(buffer_, "\"name\":");
  append_escaped(buffer_, name);
  append(buffer_, ",\"ph\":\"C\",\"ts\":");
  append_microseconds(buffer_, time_ns);
  fmt::format_to(fmt::appender(buffer_), ",\"pid\":{},\"args\":{{", pid);
  append_escaped(buffer_, series);
  buffer_.push_back(':');
  fmt::format_to(fmt::appender(buffer_), "{}", value);
  append(buffer_, "}");
  end_event();
}

void ChromeTraceWriter::commit() {
  require_open();
  append(buffer_, "\n]}\n");
  file_.stream().write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  file_.commit();
  committed_ = true;
}

}  // namespace hetsim

#pragma once
// Streams a Chrome trace event JSON document (the format ui.perfetto.dev and chrome://tracing
// open without conversion) to disk. Events go straight to the file through a small reusable
// buffer, so a trace of tens of millions of events never sits in memory; the file appears at
// `path` only when commit() succeeds (base/atomic_file.hpp).
//
// Output is deterministic: the same calls give byte-identical files. Times are given in seconds
// of simulated time and written in microseconds with exactly three decimals (nanosecond
// resolution). Start and end are each rounded to the nanosecond and "dur" is their difference,
// so slices that nest in simulated time still nest in the file.
#include <fmt/format.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "base/atomic_file.hpp"

namespace hetsim {

// One entry of an event's "args" object. Strings are viewed, not copied: they must outlive the
// call that writes them.
struct TraceArg {
  std::string_view key;
  std::variant<long long, double, std::string_view> value;
};

class ChromeTraceWriter {
 public:
  // Creates the temporary file; throws Error when it cannot be created.
  explicit ChromeTraceWriter(const std::string& path);
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Metadata ("M") events: process_name plus process_sort_index (smaller sorts higher in the UI).
  void name_process(int pid, std::string_view name, int sort_index);
  // Metadata ("M") events: thread_name plus thread_sort_index.
  void name_thread(int pid, int tid, std::string_view name, int sort_index);

  // A complete ("X") event. flow_out_id != 0 adds "bind_id" and "flow_out": true (an arrow leaves
  // this slice); flow_in_id != 0 adds "bind_id" and "flow_in": true (an arrow ends here). At most
  // one of them per slice. bind_id is written as a "0x..." hex string, the form Perfetto's JSON
  // importer reads as a 64-bit id (numbers would lose bits above 2^53 in chrome://tracing).
  // Throws Error for a negative or non-finite time, or when both flow ids are set.
  void slice(int pid, int tid, std::string_view name, std::string_view category, double start_s,
             double duration_s, std::span<const TraceArg> args, unsigned long long flow_out_id = 0,
             unsigned long long flow_in_id = 0);

  // A counter ("C") sample: track `name` of process `pid` takes `value` for series `series` from
  // time_s on. Perfetto shows it as the track "name series".
  void counter(int pid, std::string_view name, double time_s, std::string_view series,
               double value);

  // Closes the document ({"displayTimeUnit": "ms", "traceEvents": [...]}) and renames it into
  // place. No event may be written afterwards.
  void commit();

  // Events written so far, metadata included.
  std::size_t events_written() const { return events_written_; }

 private:
  void begin_event();
  void end_event();
  void flush_if_full();
  void require_open() const;

  std::string path_;
  AtomicFile file_;
  fmt::memory_buffer buffer_;  // pending bytes; written out whenever it passes kFlushBytes
  std::size_t events_written_ = 0;
  bool committed_ = false;
};

}  // namespace hetsim

#pragma once
// Checks a Chrome trace event JSON file against the rules Perfetto's JSON importer and
// chrome://tracing rely on, so that `hetsim validate TRACE` can say whether a trace opens as
// intended. The file is read event by event (a SAX parse that builds one small event at a time),
// never as a whole document: a 200 MB trace costs memory only for about 24 bytes per slice (to
// check nesting per thread), the names seen and the flows still open.
//
// Rules (any break throws InputError naming the file, the JSON path such as /traceEvents/17,
// the value and what was expected):
//   - the document is an array of events or an object whose "traceEvents" is one, nested at
//     most 64 levels deep (kMaxJsonDepth);
//   - every event is an object with a string "ph" naming a trace event phase;
//   - X: string "name", numeric "ts", numeric "dur" >= 0, "pid", "tid";
//     B/E: "ts", "pid", "tid", matched per (pid, tid) in file order, E not before its B;
//     C: "name", "ts", "pid", "args" an object of numbers;
//     M: "name", "pid"; process_name/thread_name need a string args.name (thread_name a "tid"),
//        process_sort_index/thread_sort_index an integer args.sort_index;
//     i/I/R instants: "name", "ts", "pid", "s" (if any) one of "g", "p", "t", and "tid" for "t";
//   - slices (X and B/E pairs) on one (pid, tid) nest: one that starts inside another ends inside
//     it, with a tolerance of 1e-3 us (the writer's rounding);
//   - every bind_id with "flow_out" is matched by exactly one event with "flow_in" and the same
//     bind_id (numbers, or strings read as hexadecimal as Perfetto does), and vice versa;
//   - every pid used has a process_name, and every (pid, tid) carrying a slice a thread_name.
#include <cstddef>
#include <string>

namespace hetsim {

struct TraceSummary {
  std::size_t events = 0;     // entries of traceEvents
  std::size_t slices = 0;     // X events plus matched B/E pairs
  std::size_t counters = 0;   // C events
  std::size_t flows = 0;      // matched flow_out -> flow_in arrows
  std::size_t processes = 0;  // distinct pids used by any event
  std::size_t threads = 0;    // distinct (pid, tid) carrying slices or named by thread_name
};

// Validates the trace at `path`; throws InputError at the first broken rule.
TraceSummary validate_trace_file(const std::string& path);

}  // namespace hetsim

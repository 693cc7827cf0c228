#pragma once
// Typed errors with context. Library code throws these; only main() turns them into a one-line
// message and a non-zero exit code.
#include <stdexcept>
#include <string>

namespace hetsim {

// Base of every error hetsim reports to a user. The message is kept on one line: control
// characters it holds (a JSON key with a newline, say) are written as escapes.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
};

// Bad input: names the file, the JSON path (RFC 6901 pointer, "" for the whole document), the
// offending value and what was expected. what() is "FILE: PATH: got VALUE; expected EXPECTED".
class InputError : public Error {
 public:
  InputError(std::string file, std::string json_path, std::string value, std::string expected);
  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }

 private:
  std::string file_;
  std::string json_path_;
};

// A plan that cannot be built from valid inputs (tp*pp*dp != GPUs, batch not divisible, ...).
class PlanError : public Error {
 public:
  using Error::Error;
};

// A timetable that cannot run: missing or duplicated ops, broken dependency order, deadlock.
class ScheduleError : public Error {
 public:
  using Error::Error;
};

// The engine could not finish a replay or found a broken invariant at its end.
class SimulationError : public Error {
 public:
  using Error::Error;
};

}  // namespace hetsim

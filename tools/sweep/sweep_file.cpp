// Writing and reading sweep JSON-lines files.
#include "tools/sweep/sweep_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.hpp"

namespace hetsim::sweep {

namespace {

std::string rendered(const nlohmann::json& value) {
  const std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 60) + "..." : text;
}

// What is wrong with a point line, as "/json/path: got X; expected Y", or "" when it is a point
// line the summary, CSV and resume can read: an index and the point, then either an error
// message or a report whose figures they read (tokens per second, cost per million tokens, the
// out-of-memory list) of the types a report has.
std::string point_line_problem(const nlohmann::json& line) {
  if (!line.is_object()) return fmt::format("got {}; expected a point line object", rendered(line));
  if (!line.contains("index") || !line["index"].is_number_unsigned())
    return fmt::format("/index: got {}; expected a point index >= 0",
                       line.contains("index") ? rendered(line["index"]) : "nothing");
  if (!line.contains("point") || !line["point"].is_object())
    return fmt::format("/point: got {}; expected the point's keys as an object",
                       line.contains("point") ? rendered(line["point"]) : "nothing");
  if (line.contains("error")) {
    if (!line["error"].is_string()) return fmt::format("/error: got {}; expected a message", rendered(line["error"]));
    return "";
  }
  if (!line.contains("report")) return "got no \"report\" and no \"error\"; expected one of them";
  const nlohmann::json& report = line["report"];
  if (!report.is_object()) return fmt::format("/report: got {}; expected a run report object", rendered(report));
  if (!report.contains("oom") || !report["oom"].is_array())
    return fmt::format("/report/oom: got {}; expected the list of GPUs out of memory",
                       report.contains("oom") ? rendered(report["oom"]) : "nothing");
  if (!report.contains("tokens_per_s") || !report["tokens_per_s"].is_number() ||
      !(report["tokens_per_s"].get<double>() >= 0))
    return fmt::format("/report/tokens_per_s: got {}; expected a number >= 0",
                       report.contains("tokens_per_s") ? rendered(report["tokens_per_s"]) : "nothing");
  // A run of no tokens has no cost per token (written as null).
  const nlohmann::json cost = report.value("cost_usd", nlohmann::json());
  const nlohmann::json per_million = cost.is_object() ? cost.value("per_million_tokens", nlohmann::json()) : nlohmann::json();
  if (!cost.is_object() || !((per_million.is_number() && per_million.get<double>() >= 0) ||
                             (per_million.is_null() && report["tokens_per_s"].get<double>() == 0)))
    return fmt::format("/report/cost_usd/per_million_tokens: got {}; expected dollars >= 0",
                       cost.is_object() ? rendered(per_million) : rendered(cost));
  return "";
}

}  // namespace

nlohmann::json sweep_header(const SweepSpec& spec, const Shard& shard) {
  nlohmann::json sweep{{"base", spec.base}, {"points", spec.point_count}};
  if (shard.count > 1) sweep["shard"] = shard.text();
  return {{"sweep", sweep}};
}

namespace {

// The pid holding a flock(2) lock on the open file `fd`, from /proc/locks (proc(5): "ID: FLOCK
// ADVISORY WRITE PID MAJOR:MINOR:INODE START END", major and minor in hex); "" when not found.
std::string lock_holder(int fd) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) return "";
  const std::string file_id = fmt::format("{:02x}:{:02x}:{}", major(status.st_dev),
                                          minor(status.st_dev), status.st_ino);
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    if (line.find("->") != std::string::npos) continue;  // a waiter, not the holder
    std::istringstream fields(line);
    std::string id, kind, mode, access, pid, where;
    if (fields >> id >> kind >> mode >> access >> pid >> where && kind == "FLOCK" && where == file_id)
      return pid;
  }
  return "";
}

}  // namespace

LineWriter::LineWriter(std::string path, bool append) : path_(std::move(path)) {
  // Opened without truncating, and locked before anything is cut: a second sweep writing the
  // same file is refused instead of interleaving its lines with the first one's.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_APPEND, 0644);
  if (fd_ < 0)
    throw Error(fmt::format("{}: cannot open for writing: {}", path_, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int reason = errno;
    const std::string holder = lock_holder(fd_);
    ::close(fd_);
    if (reason == EWOULDBLOCK)
      throw Error(fmt::format("{}: another process{} is writing this file; expected one writer at a time",
                              path_, holder.empty() ? "" : " (pid " + holder + ")"));
    throw Error(fmt::format("{}: cannot lock for writing: {}", path_, std::strerror(reason)));
  }
  if (!append) truncate(0);
}

void LineWriter::truncate(std::uintmax_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0)
    throw Error(fmt::format("{}: cannot truncate: {}", path_, std::strerror(errno)));
}

LineWriter::~LineWriter() { ::close(fd_); }

void LineWriter::write(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  // One call for the whole line: a kill between lines never splits one. A regular file takes
  // the whole buffer at once; the loop only matters for pipes and full disks.
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

SweepFile read_sweep_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw Error(fmt::format("{}: is a directory; expected a hetsim sweep file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  // Line by line: the file's text is never held whole, only the lines parsed from it.
  SweepFile file;
  std::string text;
  for (std::size_t number = 1; std::getline(in, text); ++number) {
    if (in.eof()) {
      file.torn = true;  // no newline: killed in the middle of a write, the point runs again
      break;
    }
    const nlohmann::json line = nlohmann::json::parse(text, nullptr, false);
    const std::string shown = text.substr(0, 60);
    if (number == 1) {
      if (!line.is_object() || !line.contains("sweep") || !line["sweep"].is_object())
        throw Error(
            fmt::format("{}: line 1: got {}; expected the header of a hetsim sweep file "
                        "({{\"sweep\": {{...}}}})",
                        path, shown));
      file.header = line;
    } else {
      if (line.is_discarded())
        throw Error(
            fmt::format("{}: line {}: got {}; expected a point line {{\"index\", \"point\", "
                        "\"report\" or \"error\"}}",
                        path, number, shown));
      if (const std::string problem = point_line_problem(line); !problem.empty())
        throw Error(fmt::format("{}: line {}: {}", path, number, problem));
      file.lines.push_back(line);
    }
    file.whole_bytes += text.size() + 1;
  }
  if (file.header.is_null())
    throw Error(fmt::format("{}: empty; expected a hetsim sweep file", path));
  return file;
}

std::vector<std::size_t> points_to_resume(const SweepFile& file, const std::string& path,
                                          const nlohmann::json& header, const SweepSpec& spec,
                                          const std::vector<std::size_t>& selected) {
  if (file.header != header)
    throw Error(
        fmt::format("{}: line 1: the file holds another sweep ({}); --resume needs the spec it was "
                    "started with ({}): same base job, point count and shard",
                    path, file.header.dump(), header.dump()));
  std::set<std::size_t> done;
  for (std::size_t i = 0; i < file.lines.size(); ++i) {
    const nlohmann::json& line = file.lines[i];
    const std::size_t index = line["index"].get<std::size_t>();
    if (index >= spec.point_count || line["point"] != spec.point(index))
      throw Error(fmt::format(
          "{}: line {}: point {} {} is not the spec's point of that index; --resume needs "
          "the spec the sweep was started with",
          path, i + 2, index, line["point"].dump()));
    if (!done.insert(index).second)
      throw Error(fmt::format("{}: line {}: point {} appears twice", path, i + 2, index));
  }
  std::vector<std::size_t> pending;
  for (const std::size_t index : selected)
    if (done.count(index) == 0) pending.push_back(index);
  return pending;
}

void sort_by_index(std::vector<nlohmann::json>& lines) {
  std::sort(lines.begin(), lines.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["index"].get<std::size_t>() < b["index"].get<std::size_t>();
  });
}

const nlohmann::json& line_at(const std::vector<nlohmann::json>& lines_by_index,
                              std::size_t index) {
  return *std::lower_bound(lines_by_index.begin(), lines_by_index.end(), index,
                           [](const nlohmann::json& line, std::size_t i) {
                             return line["index"].get<std::size_t>() < i;
                           });
}

}  // namespace hetsim::sweep

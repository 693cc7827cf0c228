// Writing and reading sweep JSON-lines files.
#include "tools/sweep/sweep_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.hpp"

namespace hetsim::sweep {

namespace {

bool is_point_line(const nlohmann::json& line) {
  return line.is_object() && line.contains("index") && line["index"].is_number_unsigned() &&
         line.contains("point") && line["point"].is_object() &&
         ((line.contains("report") && line["report"].is_object()) ||
          (line.contains("error") && line["error"].is_string()));
}

}  // namespace

nlohmann::json sweep_header(const SweepSpec& spec, const Shard& shard) {
  nlohmann::json sweep{{"base", spec.base}, {"points", spec.point_count}};
  if (shard.count > 1) sweep["shard"] = shard.text();
  return {{"sweep", sweep}};
}

LineWriter::LineWriter(std::string path, bool append) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd_ < 0)
    throw Error(fmt::format("{}: cannot open for writing: {}", path_, std::strerror(errno)));
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  SweepFile file;
  std::size_t start = 0;
  for (std::size_t number = 1; start < text.size(); ++number) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      file.torn = true;  // killed in the middle of a write: the point runs again
      break;
    }
    const nlohmann::json line =
        nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(start),
                              text.begin() + static_cast<std::ptrdiff_t>(end), nullptr, false);
    if (number == 1) {
      if (!line.is_object() || !line.contains("sweep") || !line["sweep"].is_object())
        throw Error(
            fmt::format("{}: line 1: got {}; expected the header of a hetsim sweep file "
                        "({{\"sweep\": {{...}}}})",
                        path, text.substr(start, std::min<std::size_t>(end - start, 60))));
      file.header = line;
    } else {
      if (!is_point_line(line))
        throw Error(
            fmt::format("{}: line {}: got {}; expected a point line {{\"index\", \"point\", "
                        "\"report\" or \"error\"}}",
                        path, number, text.substr(start, std::min<std::size_t>(end - start, 60))));
      file.lines.push_back(line);
    }
    start = end + 1;
    file.whole_bytes = start;
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

#pragma once
// The JSON-lines output of a sweep: a header line naming the sweep (base job, point count,
// shard), then one line per point in the order the points finish (point_runner.hpp). Lines are
// written whole, one write(2) each, so a sweep killed at any moment leaves at most a torn last
// line; --resume drops it and runs only the points the file lacks.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/sweep/shard.hpp"
#include "tools/sweep/sweep_spec.hpp"

namespace hetsim::sweep {

// {"sweep": {"base": {...}, "points": N}} plus "shard": "i/N" for one shard of N.
nlohmann::json sweep_header(const SweepSpec& spec, const Shard& shard);

// Appends lines to a file, each with a single write and no user-space buffer.
class LineWriter {
 public:
  // Takes an exclusive lock on the file (another process holding one is an error naming its
  // pid), then truncates it unless `append`. Throws Error when it cannot be opened or locked.
  LineWriter(std::string path, bool append);
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  void write(const nlohmann::json& line);  // throws Error on a failed write
  void truncate(std::uintmax_t bytes);     // cuts the file to its first `bytes`

 private:
  std::string path_;
  int fd_ = -1;
};

struct SweepFile {
  nlohmann::json header;
  std::vector<nlohmann::json> lines;  // the point lines, in file order
  std::uintmax_t whole_bytes = 0;     // bytes up to the end of the last whole line
  bool torn = false;                  // a last line without its newline was dropped
};

// Reads a sweep file. A last line without a newline is torn and dropped; any other line that is
// not a point line is an error naming the file and line.
SweepFile read_sweep_file(const std::string& path);

// The indexes of `spec` a resumed sweep still has to run: those not in `file`. Throws Error
// when the file belongs to another sweep (header differs from `header`) or holds a point line
// that does not match the spec's point of that index.
std::vector<std::size_t> points_to_resume(const SweepFile& file, const std::string& path,
                                          const nlohmann::json& header, const SweepSpec& spec,
                                          const std::vector<std::size_t>& selected);

// Lines ordered by their index: summaries, CSV and merged files list points in sweep order.
void sort_by_index(std::vector<nlohmann::json>& lines);
// The line of point `index` in lines sorted by index (which must hold it).
const nlohmann::json& line_at(const std::vector<nlohmann::json>& lines_by_index, std::size_t index);

}  // namespace hetsim::sweep

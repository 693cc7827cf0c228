#pragma once
// A CSV file read whole: header, rows, and where each cell came from, so that importers can name
// the file, line and column of a bad value. RFC 4180 quoting ("a,b" and "" inside quotes).
#include <cstddef>
#include <string>
#include <vector>

namespace hetsim::calibration {

class CsvTable {
 public:
  // Throws InputError for an unreadable file, an empty file, or a row whose cell count differs
  // from the header's.
  static CsvTable read(const std::string& path);
  static CsvTable parse(const std::string& text, const std::string& file_name);

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  std::size_t row_count() const { return rows_.size(); }
  const std::vector<std::string>& row(std::size_t i) const { return rows_[i]; }
  int line_of(std::size_t row) const { return lines_[row]; }  // 1-based line in the file

  // Index of a header column; throws InputError naming the nearest existing column.
  std::size_t column(const std::string& name) const;
  bool has_column(const std::string& name) const;
  // Where a cell is, as InputError's path: "line 12, column \"size\"".
  std::string where(std::size_t row, std::size_t column) const;

 private:
  std::string file_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
};

}  // namespace hetsim::calibration

#include "models/calibration/csv_table.hpp"

#include <fmt/format.h>


#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/json_input.hpp"

namespace hetsim::calibration {

namespace {

// Splits one record starting at `pos`; advances `pos` past its line end and `line` by the
// number of newlines consumed (quoted cells may span lines).
std::vector<std::string> split_record(const std::string& text, std::size_t& pos, int& line,
                                      const std::string& file) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  const int start_line = line;
  while (pos < text.size()) {
    const char c = text[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < text.size() && text[pos + 1] == '"') {
        cell += '"';
        pos += 2;
        continue;
      }
      if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      ++pos;
      continue;
    }
    if (c == '"' && cell.empty()) {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      ++pos;
      ++line;
      break;
    } else if (c != '\r') {
      cell += c;
    }
    ++pos;
  }
  if (quoted) {
    throw InputError(file, fmt::format("line {}", start_line), "an unterminated quoted cell",
                     "a closing '\"'");
  }
  cells.push_back(std::move(cell));
  return cells;
}

}  // namespace

CsvTable CsvTable::read(const std::string& path) {
  return parse(read_input_file(path, "CSV file"), path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& file_name) {
  CsvTable table;
  table.file_ = file_name;
  std::size_t pos = 0;
  int line = 1;
  if (text.empty()) throw InputError(file_name, "line 1", "an empty file", "a header line");
  table.header_ = split_record(text, pos, line, file_name);
  while (pos < text.size()) {
    const int record_line = line;
    auto cells = split_record(text, pos, line, file_name);
    if (cells.size() == 1 && cells[0].empty()) continue;  // blank line
    if (cells.size() != table.header_.size()) {
      throw InputError(file_name, fmt::format("line {}", record_line),
                       fmt::format("{} cells", cells.size()),
                       fmt::format("{} cells, one per header column", table.header_.size()));
    }
    table.rows_.push_back(std::move(cells));
    table.lines_.push_back(record_line);
  }
  return table;
}

bool CsvTable::has_column(const std::string& name) const {
  for (const auto& h : header_) {
    if (h == name) return true;
  }
  return false;
}

std::size_t CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  const std::string near = nearest_word(name, header_);
  throw InputError(file_, "line 1", fmt::format("no column \"{}\"", name),
                   near.empty() ? std::string("a header naming that column")
                                : fmt::format("a header naming that column (did you mean \"{}\"?)", near));
}

std::string CsvTable::where(std::size_t row, std::size_t column) const {
  return fmt::format("line {}, column \"{}\"", lines_[row], header_[column]);
}

}  // namespace hetsim::calibration

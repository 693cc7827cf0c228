// libFuzzer target: mapping expressions (models/calibration/expression.hpp). The input's first
// line is the expression; the rest is the CSV whose columns it names (a table with one column "x"
// and no rows when there is no second line), and the expression is evaluated on every row.
#include <cstdint>

#include "models/calibration/expression.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace hetsim;
  using calibration::CsvTable;
  using calibration::Expression;
  const std::string text = fuzz::as_text(data, size);
  const std::size_t end_of_line = text.find('\n');
  const std::string expression = text.substr(0, end_of_line);
  const std::string csv = end_of_line == std::string::npos ? "x" : text.substr(end_of_line + 1);
  return fuzz::expect_input_errors([&] {
    const CsvTable table = CsvTable::parse(csv, "fuzz.csv");
    const Expression e = Expression::parse(expression, table, "mapping.json", "/ops/0/time");
    for (std::size_t row = 0; row < table.row_count(); ++row) e.evaluate(table, row);
  });
}

#pragma once
// Arithmetic over the columns of one CSV row, so a column mapping can say how a measurement's
// shape follows from a profiler's own columns: "n": "n_expanded_embd * (1 + use_gated_mlp) /
// num_tensor_parallel_workers". Grammar: numbers, column names ([A-Za-z_][A-Za-z0-9_.]*),
// + - * / unary -, parentheses, and the comparisons == != < <= > >= (1 or 0) joined by &&.
// Cells "True"/"False" read as 1/0.
#include <string>
#include <vector>

#include "models/calibration/csv_table.hpp"

namespace hetsim::calibration {

class Expression {
 public:
  // Throws InputError naming `file` and `json_path` (where the expression text was read) for a
  // syntax error, a text over 1,000 characters or nesting over 64 levels (parentheses and unary
  // minus signs), and the CSV's header line for a column the table lacks.
  static Expression parse(const std::string& text, const CsvTable& table, const std::string& file,
                          const std::string& json_path);
  // Throws InputError naming the CSV line and column of a cell that is not a number.
  double evaluate(const CsvTable& table, std::size_t row) const;
  const std::string& text() const { return text_; }

 private:
  enum class Op { kNumber, kColumn, kNegate, kAdd, kSub, kMul, kDiv, kEq, kNe, kLt, kLe, kGt, kGe, kAnd };
  struct Node {
    Op op;
    double number = 0;
    std::size_t column = 0;
    int left = -1;
    int right = -1;
  };
  double eval_node(int index, const CsvTable& table, std::size_t row) const;
  friend class ExpressionParser;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace hetsim::calibration

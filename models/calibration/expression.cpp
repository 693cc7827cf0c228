#include "models/calibration/expression.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "base/error.hpp"
#include "base/json_input.hpp"

namespace hetsim::calibration {

namespace {
// A column mapping's expressions are a line each (the shipped ones are under 100 characters).
// The bounds keep the recursive parse and evaluation far from the stack's end: an expression
// nested ten thousand parentheses or signs deep, or a chain of ten thousand terms, overflowed it.
constexpr std::size_t kMaxExpressionCharacters = 1000;
constexpr int kMaxNesting = 64;  // open parentheses and unary minus signs around a term
}  // namespace

// Recursive descent: and := cmp ('&&' cmp)*; cmp := sum (relop sum)?; sum := prod (('+'|'-')
// prod)*; prod := unary (('*'|'/') unary)*; unary := '-' unary | atom; atom := number | column |
// '(' and ')'.
class ExpressionParser {
 public:
  ExpressionParser(Expression& out, const CsvTable& table, const std::string& file,
                   const std::string& path)
      : out_(out), table_(table), file_(file), path_(path), text_(out.text_) {}

  int parse_all() {
    const int root = parse_and();
    skip_space();
    if (pos_ != text_.size()) fail(fmt::format("unexpected '{}' at character {}", text_[pos_], pos_ + 1));
    return root;
  }

 private:
  using Op = Expression::Op;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(file_, path_, fmt::format("\"{}\" ({})", text_, what),
                     "an expression of numbers, column names, + - * / ( ) and comparisons");
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.compare(pos_, token.size(), token) == 0) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  int add(Op op, int left, int right) {
    out_.nodes_.push_back({op, 0, 0, left, right});
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int parse_and() {
    int left = parse_cmp();
    while (accept("&&")) left = add(Op::kAnd, left, parse_cmp());
    return left;
  }
  int parse_cmp() {
    const int left = parse_sum();
    if (accept("==")) return add(Op::kEq, left, parse_sum());
    if (accept("!=")) return add(Op::kNe, left, parse_sum());
    if (accept("<=")) return add(Op::kLe, left, parse_sum());
    if (accept(">=")) return add(Op::kGe, left, parse_sum());
    if (accept("<")) return add(Op::kLt, left, parse_sum());
    if (accept(">")) return add(Op::kGt, left, parse_sum());
    return left;
  }
  int parse_sum() {
    int left = parse_prod();
    for (;;) {
      if (accept("+")) left = add(Op::kAdd, left, parse_prod());
      else if (accept("-")) left = add(Op::kSub, left, parse_prod());
      else return left;
    }
  }
  int parse_prod() {
    int left = parse_unary();
    for (;;) {
      if (accept("*")) left = add(Op::kMul, left, parse_unary());
      else if (accept("/")) left = add(Op::kDiv, left, parse_unary());
      else return left;
    }
  }
  int parse_unary() {
    if (accept("-")) {
      const Nested nested(*this);
      return add(Op::kNegate, parse_unary(), -1);
    }
    return parse_atom();
  }
  // Counts one level of nesting for as long as it lives.
  struct Nested {
    explicit Nested(ExpressionParser& parser) : parser_(parser) {
      if (++parser_.depth_ > kMaxNesting)
        parser_.fail(fmt::format("nested more than {} levels deep at character {}", kMaxNesting, parser_.pos_));
    }
    ~Nested() { --parser_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
    ExpressionParser& parser_;
  };
  int parse_atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("ends too early");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const Nested nested(*this);
      const int inner = parse_and();
      if (!accept(")")) fail("missing ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      double value = 0;
      const char* begin = text_.data() + pos_;
      const auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), value);
      if (ec != std::errc()) fail(fmt::format("bad number at character {}", pos_ + 1));
      pos_ += static_cast<std::size_t>(end - begin);
      out_.nodes_.push_back({Op::kNumber, value, 0, -1, -1});
      return static_cast<int>(out_.nodes_.size()) - 1;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                     text_[pos_] == '_' || text_[pos_] == '.')) {
        ++pos_;
      }
      // A name the CSV lacks is the mapping's to fix: told at the mapping's JSON path.
      const std::string name = text_.substr(start, pos_ - start);
      if (!table_.has_column(name)) {
        const std::string near = nearest_word(name, table_.header());
        throw InputError(file_, path_, fmt::format("\"{}\" (no column \"{}\" in {})", text_, name, table_.file()),
                         near.empty() ? std::string("a column of that CSV's header")
                                      : fmt::format("a column of that CSV's header (did you mean \"{}\"?)", near));
      }
      const std::size_t column = table_.column(name);
      out_.nodes_.push_back({Op::kColumn, 0, column, -1, -1});
      return static_cast<int>(out_.nodes_.size()) - 1;
    }
    fail(fmt::format("unexpected '{}' at character {}", c, pos_ + 1));
  }

  Expression& out_;
  const CsvTable& table_;
  const std::string& file_;
  const std::string& path_;
  const std::string& text_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // parentheses and unary minus signs open at pos_
};

Expression Expression::parse(const std::string& text, const CsvTable& table, const std::string& file,
                             const std::string& json_path) {
  if (text.size() > kMaxExpressionCharacters) {
    throw InputError(file, json_path, fmt::format("an expression of {} characters", text.size()),
                     fmt::format("an expression of at most {} characters", kMaxExpressionCharacters));
  }
  Expression e;
  e.text_ = text;
  ExpressionParser parser(e, table, file, json_path);
  e.root_ = parser.parse_all();
  return e;
}

double Expression::evaluate(const CsvTable& table, std::size_t row) const {
  return eval_node(root_, table, row);
}

double Expression::eval_node(int index, const CsvTable& table, std::size_t row) const {
  const Node& n = nodes_[static_cast<std::size_t>(index)];
  auto l = [&] { return eval_node(n.left, table, row); };
  auto r = [&] { return eval_node(n.right, table, row); };
  switch (n.op) {
    case Op::kNumber: return n.number;
    case Op::kColumn: {
      const std::string& cell = table.row(row)[n.column];
      if (cell == "True" || cell == "true") return 1.0;
      if (cell == "False" || cell == "false") return 0.0;
      double value = 0;
      const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
      if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size()) {
        throw InputError(table.file(), table.where(row, n.column), fmt::format("\"{}\"", cell),
                         "a number (or True/False)");
      }
      return value;
    }
    case Op::kNegate: return -l();
    case Op::kAdd: return l() + r();
    case Op::kSub: return l() - r();
    case Op::kMul: return l() * r();
    case Op::kDiv: return l() / r();
    case Op::kEq: return l() == r() ? 1.0 : 0.0;
    case Op::kNe: return l() != r() ? 1.0 : 0.0;
    case Op::kLt: return l() < r() ? 1.0 : 0.0;
    case Op::kLe: return l() <= r() ? 1.0 : 0.0;
    case Op::kGt: return l() > r() ? 1.0 : 0.0;
    case Op::kGe: return l() >= r() ? 1.0 : 0.0;
    case Op::kAnd: return (l() != 0.0 && r() != 0.0) ? 1.0 : 0.0;
  }
  return 0.0;
}

}  // namespace hetsim::calibration

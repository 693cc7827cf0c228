#include "models/calibration/csv_importer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "base/error.hpp"
#include "base/input_file.hpp"
#include "base/json_input.hpp"
#include "models/calibration/csv_table.hpp"
#include "models/calibration/expression.hpp"

namespace hetsim::calibration {

namespace {

// A text field of a mapping op: a constant, or "$column" to read the text from that column.
struct TextField {
  std::string constant;
  std::optional<std::size_t> column;
  std::string get(const CsvTable& table, std::size_t row) const {
    return column ? table.row(row)[*column] : constant;
  }
};

struct OpMapping {
  std::string path;  // JSON path of this op in the mapping, for messages
  TextField kind, op, label, dtype;
  std::optional<Expression> time, m, n, k, batch, heads, seq, head_dim, causal, bytes, ranks;
};

double seconds_per_unit(const JsonInput& mapping) {
  const std::string unit = mapping.string_or("time_unit", "s");
  if (unit == "s") return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  mapping.at("time_unit").fail("one of \"s\", \"ms\", \"us\", \"ns\"");
}

TextField text_field(const JsonInput& op, const std::string& key, const CsvTable& table,
                     const std::string& fallback) {
  TextField field;
  const std::string text = op.string_or(key, fallback);
  if (!text.empty() && text[0] == '$') {
    field.column = table.column(text.substr(1));
  } else {
    field.constant = text;
  }
  return field;
}

std::optional<Expression> expression_field(const JsonInput& op, const std::string& key,
                                           const CsvTable& table) {
  if (!op.has(key)) return std::nullopt;
  const JsonInput field = op.at(key);
  std::string text;
  if (field.value().is_string()) {
    text = field.value().get<std::string>();
  } else if (field.value().is_number()) {
    text = field.value().dump();
  } else {
    field.fail("an expression (a string) or a number");
  }
  return Expression::parse(text, table, op.file(), field.path());
}

// The expression a kind needs; a mapping that lacks it is an error of the mapping.
double required(const std::optional<Expression>& e, const char* key, const OpMapping& op,
                const std::string& mapping_name, const std::string& kind, const CsvTable& table,
                std::size_t row) {
  if (!e) {
    throw InputError(mapping_name, op.path + "/" + key, "nothing (missing)",
                     fmt::format("an expression for \"{}\", which {} rows need", key, kind));
  }
  return e->evaluate(table, row);
}

double positive_value(const std::optional<Expression>& e, const char* key, const OpMapping& op,
                      const std::string& mapping_name, const std::string& kind, const CsvTable& table,
                      std::size_t row) {
  const double v = required(e, key, op, mapping_name, kind, table, row);
  if (!(v > 0) || !std::isfinite(v)) {
    throw InputError(table.file(), fmt::format("line {}", table.line_of(row)),
                     fmt::format("{} = {} (from \"{}\")", key, v, e->text()),
                     fmt::format("a {} > 0", key));
  }
  return v;
}

}  // namespace

std::vector<Measurement> import_csv(const std::string& csv_path, const std::string& mapping_path) {
  const nlohmann::json mapping = read_json_file(mapping_path);
  return import_csv_text(read_input_file(csv_path, "CSV file"), csv_path, mapping, mapping_path);
}

std::vector<Measurement> import_csv_text(const std::string& csv_text, const std::string& csv_name,
                                         const nlohmann::json& mapping_json,
                                         const std::string& mapping_name) {
  const CsvTable table = CsvTable::parse(csv_text, csv_name);
  const JsonInput mapping(mapping_json, mapping_name);
  mapping.reject_unknown_keys({"description", "source", "time_unit", "where", "tags", "ops"});
  const double unit = seconds_per_unit(mapping);

  std::optional<Expression> where;
  if (mapping.has("where")) {
    where = Expression::parse(mapping.string("where"), table, mapping_name, "/where");
  }
  std::vector<std::pair<std::string, Expression>> tags;
  if (mapping.has("tags")) {
    const JsonInput tag_input = mapping.at("tags");
    if (!tag_input.value().is_object()) tag_input.fail("an object of tag name -> expression");
    for (const auto& [name, value] : tag_input.value().items()) {
      tags.emplace_back(name, Expression::parse(tag_input.string(name), table, mapping_name,
                                                tag_input.path() + "/" + name));
    }
  }

  const JsonInput ops_input = mapping.at("ops");
  if (!ops_input.value().is_array() || ops_input.array_size() == 0) {
    ops_input.fail("a non-empty array of op mappings");
  }
  std::vector<OpMapping> ops;
  for (std::size_t i = 0; i < ops_input.array_size(); ++i) {
    const JsonInput o = ops_input.at(i);
    o.reject_unknown_keys({"kind", "op", "label", "dtype", "time", "m", "n", "k", "batch", "heads",
                           "seq", "head_dim", "causal", "bytes", "ranks"});
    OpMapping op;
    op.path = o.path();
    op.kind = text_field(o, "kind", table, "");
    if (!op.kind.column) {
      OpKind probe{};
      if (!parse_op_kind(op.kind.constant, probe)) {
        o.fail_member("kind", "one of gemm, attention, memory_bound, copy, collective, launch "
                              "(or \"$column\")");
      }
    }
    op.op = text_field(o, "op", table, "");
    op.label = o.has("label") ? text_field(o, "label", table, "") : op.op;
    op.dtype = text_field(o, "dtype", table, "");
    if (!o.has("time")) o.fail_member("time", "an expression giving the op's time");
    op.time = expression_field(o, "time", table);
    op.m = expression_field(o, "m", table);
    op.n = expression_field(o, "n", table);
    op.k = expression_field(o, "k", table);
    op.batch = expression_field(o, "batch", table);
    op.heads = expression_field(o, "heads", table);
    op.seq = expression_field(o, "seq", table);
    op.head_dim = expression_field(o, "head_dim", table);
    op.causal = expression_field(o, "causal", table);
    op.bytes = expression_field(o, "bytes", table);
    op.ranks = expression_field(o, "ranks", table);
    ops.push_back(std::move(op));
  }

  std::vector<Measurement> out;
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    if (where && where->evaluate(table, row) == 0.0) continue;
    for (const OpMapping& op : ops) {
      Measurement m;
      const std::string kind_text = op.kind.get(table, row);
      if (!parse_op_kind(kind_text, m.kind)) {
        throw InputError(table.file(), table.where(row, *op.kind.column), fmt::format("\"{}\"", kind_text),
                         "one of gemm, attention, memory_bound, copy, collective, launch");
      }
      m.op = op.op.get(table, row);
      m.label = op.label.get(table, row);
      m.dtype = op.dtype.get(table, row);
      const double t = op.time->evaluate(table, row) * unit;
      if (!(t > 0) || !std::isfinite(t)) {
        throw InputError(table.file(), fmt::format("line {}", table.line_of(row)),
                         fmt::format("time {} s (from \"{}\")", t, op.time->text()), "a time > 0");
      }
      m.seconds = t;
      switch (m.kind) {
        case OpKind::kGemm:
          m.m = positive_value(op.m, "m", op, mapping_name, kind_text, table, row);
          m.n = positive_value(op.n, "n", op, mapping_name, kind_text, table, row);
          m.k = positive_value(op.k, "k", op, mapping_name, kind_text, table, row);
          break;
        case OpKind::kAttention:
          m.batch = positive_value(op.batch, "batch", op, mapping_name, kind_text, table, row);
          m.heads = positive_value(op.heads, "heads", op, mapping_name, kind_text, table, row);
          m.seq = positive_value(op.seq, "seq", op, mapping_name, kind_text, table, row);
          m.head_dim = positive_value(op.head_dim, "head_dim", op, mapping_name, kind_text, table, row);
          m.causal = op.causal && op.causal->evaluate(table, row) != 0.0;
          break;
        case OpKind::kMemoryBound:
        case OpKind::kCopy:
          m.bytes = positive_value(op.bytes, "bytes", op, mapping_name, kind_text, table, row);
          break;
        case OpKind::kCollective:
          m.bytes = positive_value(op.bytes, "bytes", op, mapping_name, kind_text, table, row);
          m.ranks = static_cast<int>(
              std::lround(positive_value(op.ranks, "ranks", op, mapping_name, kind_text, table, row)));
          break;
        case OpKind::kLaunch:
          break;
      }
      for (const auto& [name, e] : tags) m.tags.emplace_back(name, e.evaluate(table, row));
      m.source = fmt::format("{}:{}", table.file(), table.line_of(row));
      out.push_back(std::move(m));
    }
  }
  return out;
}

}  // namespace hetsim::calibration

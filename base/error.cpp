#include "base/error.hpp"

#include <fmt/format.h>

namespace hetsim {

namespace {
std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (byte < 0x20 || byte == 0x7f) out += fmt::format("\\x{:02x}", byte);
    else out += c;
  }
  return out;
}

std::string describe(const std::string& file, const std::string& path, const std::string& value,
                     const std::string& expected) {
  const std::string where = path.empty() ? std::string("(document)") : path;
  return fmt::format("{}: {}: got {}; expected {}", file, where, value, expected);
}
}  // namespace

Error::Error(const std::string& message) : std::runtime_error(one_line(message)) {}

InputError::InputError(std::string file, std::string json_path, std::string value,
                       std::string expected)
    : Error(describe(file, json_path, value, expected)),
      file_(std::move(file)),
      json_path_(std::move(json_path)) {}

}  // namespace hetsim

#include "base/error.hpp"

#include <fmt/format.h>

namespace hetsim {

namespace {
std::string describe(const std::string& file, const std::string& path, const std::string& value,
                     const std::string& expected) {
  const std::string where = path.empty() ? std::string("(document)") : path;
  return fmt::format("{}: {}: got {}; expected {}", file, where, value, expected);
}
}  // namespace

InputError::InputError(std::string file, std::string json_path, std::string value,
                       std::string expected)
    : Error(describe(file, json_path, value, expected)),
      file_(std::move(file)),
      json_path_(std::move(json_path)) {}

}  // namespace hetsim

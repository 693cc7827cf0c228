#include "base/input_file.hpp"

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "base/error.hpp"

namespace hetsim {

std::string read_input_file(const std::string& path, const std::string& kind) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status)) throw InputError(path, "", "a directory", "a " + kind);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "an unreadable file", "a readable " + kind);
  // Read in blocks and stop one block past the limit.
  std::string text;
  std::array<char, 1 << 16> block{};
  while (in && text.size() <= kMaxInputFileBytes) {
    in.read(block.data(), block.size());
    text.append(block.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (text.size() > kMaxInputFileBytes)
    throw InputError(path, "", fmt::format("a file of more than {} MiB", kMaxInputFileBytes >> 20),
                     "a " + kind + " of at most that size");
  return text;
}

}  // namespace hetsim

#pragma once
// Reading a whole input file (JSON, CSV) with its size checked while it is read, so that a huge
// or endless input (a device such as /dev/zero, a FIFO that never closes) costs no more than the
// limit before it is refused.
#include <cstddef>
#include <string>

namespace hetsim {

// Far above any input hetsim reads (the largest shipped or recorded file is a 1.2 MB kernel CSV;
// a million-point bandwidth trace is about 20 MB), far below what would strain memory.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{32} << 20;

// The bytes of `path`. Throws InputError for a directory, an unreadable file or one larger than
// kMaxInputFileBytes; `kind` names what was expected ("JSON file", "CSV file").
std::string read_input_file(const std::string& path, const std::string& kind);

}  // namespace hetsim

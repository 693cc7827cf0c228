// Shards of a sweep.
#include "tools/sweep/shard.hpp"

#include <fmt/format.h>

#include <charconv>

#include "base/error.hpp"

namespace hetsim::sweep {

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

Shard parse_shard(const std::string& text, const std::string& flag) {
  Shard shard;
  const auto slash = text.find('/');
  const char* begin = text.data();
  const char* end = begin + text.size();
  // A number whole and within range on each side (from_chars leaves an out-of-range value
  // unread and says so only in its error code).
  const auto whole = [](const char* from, const char* to, int& value) {
    const auto [stop, error] = std::from_chars(from, to, value);
    return stop == to && error == std::errc{};
  };
  const bool ok = slash != std::string::npos && whole(begin, begin + slash, shard.index) &&
                  whole(begin + slash + 1, end, shard.count) && slash > 0 &&
                  slash + 1 < text.size() && shard.count >= 1 && shard.index >= 0 &&
                  shard.index < shard.count;
  if (!ok)
    throw Error(fmt::format("{}: got \"{}\"; expected i/N with 0 <= i < N, e.g. 0/4", flag, text));
  return shard;
}

std::vector<std::size_t> share_of(const std::vector<std::size_t>& items, int part, int parts) {
  std::vector<std::size_t> share;
  for (std::size_t i = static_cast<std::size_t>(part); i < items.size();
       i += static_cast<std::size_t>(parts))
    share.push_back(items[i]);
  return share;
}

}  // namespace hetsim::sweep

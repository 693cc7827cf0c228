#pragma once
// Splitting a sweep's points into parts: `--shard i/N` for job arrays, and the ranks of an
// mpirun. Part i of N takes every N-th point from the i-th on, so parts are equal within one
// point and the split needs no communication.
#include <cstddef>
#include <string>
#include <vector>

namespace hetsim::sweep {

struct Shard {
  int index = 0;
  int count = 1;
  std::string text() const;  // "i/N"
};

// Parses "i/N" with 0 <= i < N. Throws Error naming `flag`.
Shard parse_shard(const std::string& text, const std::string& flag);

// Every `parts`-th element of `items` from the `part`-th on.
std::vector<std::size_t> share_of(const std::vector<std::size_t>& items, int part, int parts);

}  // namespace hetsim::sweep

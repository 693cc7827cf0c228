#pragma once
// The cluster's cache of composed GPU routes: the key of an ordered GPU pair -> where the route's
// links are stored. Open addressing with linear probing in one array (a power of two of slots,
// at most three quarters full) rather than a node per route: a 65,536-GPU replay's setup asks
// for a few hundred thousand routes, and std::unordered_map spent a heap block to build and one
// to free on each, and a cache miss per look-up on reaching its node.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "topologies/cluster.hpp"

namespace hetsim {

struct StoredRoute {
  const LinkId* links = nullptr;
  std::uint32_t length = 0;
};

class RouteTable {
 public:
  // The key no GPU pair has: from = to = -1.
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};

  // The route stored under `key` (not kNoKey), or nullptr. Valid until the next insert.
  const StoredRoute* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return &slots_[i].route;
      if (slots_[i].key == kNoKey) return nullptr;
    }
  }
  // Stores `route` under `key` (not kNoKey), which find() does not know.
  void insert(std::uint64_t key, StoredRoute route) {
    if (4 * (size_ + 1) > 3 * slots_.size()) grow();
    place(key, route);
    ++size_;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = kNoKey;
    StoredRoute route;
  };
  static constexpr int kFirstBits = 10;

  std::size_t mask() const { return slots_.size() - 1; }
  // Fibonacci hashing (Knuth, TAOCP vol. 3, section 6.4): the top bits of key * 2^64 / phi
  // depend on every bit of the key, so pairs that differ in either GPU spread apart.
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits_));
  }
  void place(std::uint64_t key, StoredRoute route) {
    std::size_t i = home(key);
    while (slots_[i].key != kNoKey) i = (i + 1) & mask();
    slots_[i] = Slot{key, route};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    bits_ = old.empty() ? kFirstBits : bits_ + 1;
    slots_.assign(std::size_t{1} << bits_, Slot{});
    for (const Slot& slot : old)
      if (slot.key != kNoKey) place(slot.key, slot.route);
  }

  std::vector<Slot> slots_;
  int bits_ = 0;
  std::size_t size_ = 0;
};

}  // namespace hetsim

#pragma once
// The engine's event queue. Order is (time, insertion order): simulated time in seconds (double),
// ties broken by the order of the pushes, so the same inputs pop in the same order on every
// machine.
//
// A radix heap (Ahuja, Mehlhorn, Orlin & Tarjan, "Faster algorithms for the shortest path
// problem", J. ACM 37(2), 1990): simulated time never goes back, so every event pushed is no
// earlier than the last one popped, and a monotone queue suffices. Times >= 0 order like their
// IEEE-754 bit patterns read as unsigned integers; an event waits in bucket b, where b - 1 is the
// highest bit in which its time's pattern differs from the last popped time's (bucket 0: equal).
// A pop takes bucket 0 in arrival order; when it is empty, the lowest non-empty bucket is spread
// over the buckets below it around its earliest time. An event only ever moves down, so a push
// and a pop cost O(64) moves amortized, not O(log n) comparisons with cache misses.
//
// Insertion order survives within every bucket: pushes append in insertion order, and a bucket is
// refilled from a higher one only while it is empty. So bucket 0, which holds one time, pops in
// insertion order: the same order as a binary heap under (time, sequence number), and an event
// needs no sequence number (24 bytes, not 32, for the pushes and spreads to move).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/error.hpp"

namespace hetsim {

struct Event {
  double time = 0;             // seconds of simulated time
  std::uint32_t handler = 0;   // who handles it (Engine::add_handler)
  std::uint32_t kind = 0;      // handler-defined
  std::uint64_t payload = 0;   // handler-defined
};

class EventQueue {
 public:
  // `time` must be >= 0 and no earlier than the last event popped.
  void push(double time, std::uint32_t handler, std::uint32_t kind, std::uint64_t payload) {
    if (!(time >= 0)) throw SimulationError("event queued at a negative or NaN time");
    time += 0.0;  // -0 becomes +0, whose bit pattern is the smallest
    const std::uint64_t key = key_of(time);
    if (key < last_popped_) throw SimulationError("event queued before the last event popped");
    buckets_[bucket_of(key)].push_back(Event{time, handler, kind, payload});
    ++size_;
  }
  // The earliest event; the queue must not be empty.
  Event pop() {
    if (head_ == buckets_[0].size()) spread_lowest_bucket();
    --size_;
    return buckets_[0][head_++];
  }
  // The event that will pop after `ahead` others (0: the next), when it is already queued at the
  // time being popped (bucket 0); nullptr otherwise. For prefetching what handling it touches.
  const Event* ahead_at_same_time(std::size_t ahead) const {
    const std::size_t index = head_ + ahead;
    return index < buckets_[0].size() ? &buckets_[0][index] : nullptr;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

 private:
  static constexpr int kBuckets = 65;  // bucket 0 (equal to the last popped) and one per bit

  static std::uint64_t key_of(double time) {
    std::uint64_t key;
    std::memcpy(&key, &time, sizeof key);
    return key;
  }
  int bucket_of(std::uint64_t key) const {
    return key == last_popped_ ? 0 : 64 - std::countl_zero(key ^ last_popped_);
  }
  // Bucket 0 is used up: the earliest time left, in the lowest non-empty bucket, becomes the
  // last popped, and that bucket's events move to the buckets below it, bucket 0 holding those
  // at exactly that time.
  void spread_lowest_bucket() {
    buckets_[0].clear();
    head_ = 0;
    int lowest = 1;
    while (buckets_[lowest].empty()) ++lowest;
    std::vector<Event>& from = buckets_[lowest];
    std::uint64_t earliest = key_of(from.front().time);
    for (const Event& e : from) earliest = std::min(earliest, key_of(e.time));
    last_popped_ = earliest;
    for (const Event& e : from) buckets_[bucket_of(key_of(e.time))].push_back(e);
    from.clear();
  }

  std::vector<Event> buckets_[kBuckets];
  std::size_t head_ = 0;  // next event of bucket 0 to pop
  std::size_t size_ = 0;
  std::uint64_t last_popped_ = 0;  // key of the time last spread around (0: time 0)
};

}  // namespace hetsim

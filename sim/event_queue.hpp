#pragma once
// The engine's event queue. Order is (time, sequence number): simulated time in seconds (double),
// ties broken by insertion order, so the same inputs pop in the same order on every machine.
#include <cstdint>
#include <queue>
#include <vector>

namespace hetsim {

struct Event {
  double time = 0;          // seconds of simulated time
  std::uint64_t sequence = 0;  // insertion order; the tie-breaker
  std::uint32_t handler = 0;   // who handles it (Engine::add_handler)
  std::uint32_t kind = 0;      // handler-defined
  std::uint64_t payload = 0;   // handler-defined
};

class EventQueue {
 public:
  void push(double time, std::uint32_t handler, std::uint32_t kind, std::uint64_t payload) {
    heap_.push(Event{time, next_sequence_++, handler, kind, payload});
  }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }

 private:
  // std::priority_queue is a max-heap: "later" compares as smaller priority.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace hetsim

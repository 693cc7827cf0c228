#pragma once
// The discrete-event engine: an object (many may live in one process), simulated time only.
// Models register as handlers and exchange events through schedule(); nothing else couples them.
#include <cstdint>
#include <vector>

#include "sim/event_queue.hpp"

namespace hetsim {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(const Event& event) = 0;
  // Called for an event some pops ahead of its turn, once with kFar and again nearer with kNear:
  // a handler may start fetching what handling it will read (kFar: the event's own state; kNear:
  // what that state points to, by then in cache). Changes nothing.
  enum class Lookahead { kFar, kNear };
  virtual void prefetch(const Event& /*event*/, Lookahead /*stage*/) const {}
};

// What the engines of one thread did inside Engine::run, summed over all of them: a benchmark
// reads it before and after a simulation to time the event loop apart from the setup around it
// and to size a reference loop. Wall-clock figures: never part of a simulation's result.
struct EventLoopStats {
  double wall_s = 0;                 // inside run()
  std::uint64_t events = 0;          // popped and dispatched
  std::uint64_t pending_sum = 0;     // events still queued after each pop, summed
};

class Engine {
 public:
  std::uint32_t add_handler(EventHandler& handler);
  // Schedules an event `delay_s` >= 0 seconds after now().
  void schedule(double delay_s, std::uint32_t handler, std::uint32_t kind, std::uint64_t payload);
  // Pops and dispatches events until none is left.
  void run();
  double now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  std::size_t events_pending() const { return queue_.size(); }
  static const EventLoopStats& thread_loop_stats();

 private:
  EventQueue queue_;
  std::vector<EventHandler*> handlers_;
  double now_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace hetsim

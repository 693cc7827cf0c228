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

// Consecutive schedules at the same time (a transfer's eight flows draining together, then their
// eight deliveries) enter the queue as one entry, a batch, whose events are dispatched one after
// another when it pops. Nothing is pushed between them and equal times pop in insertion order, so
// they would have popped one after another anyway: handlers see the same events, times and order,
// and events_processed() counts each. In bench_replay's scaling cases the queue holds 14-16% as
// many entries as there are events (BENCHMARKS.md, 2026-12-06, night).
class Engine {
 public:
  std::uint32_t add_handler(EventHandler& handler);
  // Schedules an event `delay_s` >= 0 seconds after now().
  void schedule(double delay_s, std::uint32_t handler, std::uint32_t kind, std::uint64_t payload);
  // Pops and dispatches events until none is left.
  void run();
  double now() const { return now_; }
  std::uint64_t events_processed() const { return processed_; }
  std::size_t events_pending() const { return pending_; }
  static const EventLoopStats& thread_loop_stats();

 private:
  struct BatchedEvent {
    std::uint32_t handler;
    std::uint32_t kind;
    std::uint64_t payload;
  };
  // A queue entry of this handler is a batch: its payload indexes batches_.
  static constexpr std::uint32_t kBatchHandler = 0xffffffffu;

  // Moves the run of events scheduled at run_time_ into the queue: one event alone, or a batch.
  void queue_run();
  void prefetch(const Event& entry, EventHandler::Lookahead stage) const;
  void dispatch(const Event& event, std::uint64_t& pending_sum);

  EventQueue queue_;
  std::vector<EventHandler*> handlers_;
  // The latest schedules, all at run_time_, held back until one at another time or the next pop.
  std::vector<BatchedEvent> run_;
  double run_time_ = 0;
  std::vector<std::vector<BatchedEvent>> batches_;  // queued batches' events; emptied ones reused
  std::vector<std::uint32_t> free_batches_;
  std::size_t pending_ = 0;  // scheduled and not yet dispatched, batched ones each counted
  double now_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace hetsim

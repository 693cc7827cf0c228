#include "sim/engine.hpp"

#include <chrono>

#include "base/error.hpp"

namespace hetsim {

namespace {
thread_local EventLoopStats loop_stats;
}  // namespace

const EventLoopStats& Engine::thread_loop_stats() { return loop_stats; }

std::uint32_t Engine::add_handler(EventHandler& handler) {
  handlers_.push_back(&handler);
  return static_cast<std::uint32_t>(handlers_.size() - 1);
}

void Engine::schedule(double delay_s, std::uint32_t handler, std::uint32_t kind,
                      std::uint64_t payload) {
  // A negative or NaN delay would move time backwards; it is a bug in a model, not bad input.
  if (!(delay_s >= 0)) throw SimulationError("event scheduled with a negative or NaN delay");
  queue_.push(now_ + delay_s, handler, kind, payload);
}

namespace {
constexpr std::size_t kFarLookahead = 8;
constexpr std::size_t kNearLookahead = 4;
}  // namespace

void Engine::run() {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t processed_before = processed_;
  std::uint64_t pending_sum = 0;
  while (!queue_.empty()) {
    const Event event = queue_.pop();
    if (const Event* far = queue_.ahead_at_same_time(kFarLookahead))
      handlers_[far->handler]->prefetch(*far, EventHandler::Lookahead::kFar);
    if (const Event* near = queue_.ahead_at_same_time(kNearLookahead))
      handlers_[near->handler]->prefetch(*near, EventHandler::Lookahead::kNear);
    now_ = event.time;
    ++processed_;
    pending_sum += queue_.size();
    handlers_[event.handler]->handle(event);
  }
  loop_stats.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  loop_stats.events += processed_ - processed_before;
  loop_stats.pending_sum += pending_sum;
}

}  // namespace hetsim

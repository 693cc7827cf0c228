#include "sim/engine.hpp"

#include "base/error.hpp"

namespace hetsim {

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

void Engine::run() {
  while (!queue_.empty()) {
    const Event event = queue_.pop();
    now_ = event.time;
    ++processed_;
    handlers_[event.handler]->handle(event);
  }
}

}  // namespace hetsim

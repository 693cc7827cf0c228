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
  const double time = now_ + delay_s;
  if (!run_.empty() && time != run_time_) queue_run();
  run_time_ = time;
  run_.push_back({handler, kind, payload});
  ++pending_;
}

void Engine::queue_run() {
  if (run_.size() == 1) {
    queue_.push(run_time_, run_[0].handler, run_[0].kind, run_[0].payload);
    run_.clear();
    return;
  }
  std::uint32_t batch;
  if (free_batches_.empty()) {
    batch = static_cast<std::uint32_t>(batches_.size());
    batches_.emplace_back();
  } else {
    batch = free_batches_.back();
    free_batches_.pop_back();
  }
  // The run's buffer becomes the batch's; run_ takes over the emptied batch's capacity.
  batches_[batch].swap(run_);
  queue_.push(run_time_, kBatchHandler, 0, batch);
}

namespace {
constexpr std::size_t kFarLookahead = 8;
constexpr std::size_t kNearLookahead = 4;
}  // namespace

void Engine::prefetch(const Event& entry, EventHandler::Lookahead stage) const {
  if (entry.handler != kBatchHandler) {
    handlers_[entry.handler]->prefetch(entry, stage);
    return;
  }
  for (const BatchedEvent& e : batches_[entry.payload])
    handlers_[e.handler]->prefetch(Event{entry.time, e.handler, e.kind, e.payload}, stage);
}

void Engine::dispatch(const Event& event, std::uint64_t& pending_sum) {
  ++processed_;
  pending_sum += --pending_;
  handlers_[event.handler]->handle(event);
}

void Engine::run() {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t processed_before = processed_;
  std::uint64_t pending_sum = 0;
  for (;;) {
    if (!run_.empty()) queue_run();
    if (queue_.empty()) break;
    const Event entry = queue_.pop();
    if (const Event* far = queue_.ahead_at_same_time(kFarLookahead))
      prefetch(*far, EventHandler::Lookahead::kFar);
    if (const Event* near = queue_.ahead_at_same_time(kNearLookahead))
      prefetch(*near, EventHandler::Lookahead::kNear);
    now_ = entry.time;
    if (entry.handler != kBatchHandler) {
      dispatch(entry, pending_sum);
      continue;
    }
    // By index: a handler's schedules may add batches, moving batches_'s elements.
    const auto batch = static_cast<std::uint32_t>(entry.payload);
    for (std::size_t i = 0; i < batches_[batch].size(); ++i) {
      const BatchedEvent e = batches_[batch][i];
      dispatch(Event{entry.time, e.handler, e.kind, e.payload}, pending_sum);
    }
    batches_[batch].clear();
    free_batches_.push_back(batch);
  }
  loop_stats.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  loop_stats.events += processed_ - processed_before;
  loop_stats.pending_sum += pending_sum;
}

}  // namespace hetsim

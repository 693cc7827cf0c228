// The engine's order: (time, insertion sequence). Equal times pop in insertion order, whatever
// the heap's layout.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sim/engine.hpp"

using namespace hetsim;

namespace {
struct Recorder : EventHandler {
  void handle(const Event& e) override { order.push_back(e.payload); }
  std::vector<std::uint64_t> order;
};
}  // namespace

TEST_CASE("ties break by insertion order, earlier times first") {
  Engine engine;
  Recorder recorder;
  const auto id = engine.add_handler(recorder);
  engine.schedule(2.0, id, 0, 10);
  engine.schedule(1.0, id, 0, 20);
  engine.schedule(1.0, id, 0, 30);
  engine.schedule(0.0, id, 0, 40);
  engine.schedule(1.0, id, 0, 50);
  engine.run();
  CHECK(recorder.order == std::vector<std::uint64_t>{40, 20, 30, 50, 10});
  CHECK(engine.events_processed() == 5);
  CHECK(engine.now() == 2.0);
}

TEST_CASE("a negative delay is refused") {
  Engine engine;
  Recorder recorder;
  const auto id = engine.add_handler(recorder);
  CHECK_THROWS_WITH(engine.schedule(-1.0, id, 0, 0), "event scheduled with a negative or NaN delay");
}

TEST_CASE("the queue pops in the order of a sorted (time, sequence) list under random pushes") {
  // Times on a coarse grid so that many tie; pops interleave with pushes (an engine's handler
  // pushes right after a pop, into the root the pop left vacant) and runs of either.
  EventQueue queue;
  std::vector<Event> reference;  // every event pushed and not yet popped
  std::mt19937_64 random(12);
  std::uint64_t sequence = 0;
  double now = 0;
  for (int step = 0; step < 20000; ++step) {
    const auto roll = random() % 8;
    if (roll < 4 || reference.empty()) {
      const double time = now + static_cast<double>(random() % 16) * 0.25;
      queue.push(time, 0, 0, sequence);
      reference.push_back(Event{time, sequence, 0, 0, sequence});
      ++sequence;
    } else {
      const auto earliest = std::min_element(
          reference.begin(), reference.end(), [](const Event& a, const Event& b) {
            return a.time != b.time ? a.time < b.time : a.sequence < b.sequence;
          });
      const Event popped = queue.pop();
      REQUIRE(popped.payload == earliest->payload);
      CHECK(popped.time == earliest->time);
      now = popped.time;
      reference.erase(earliest);
    }
    REQUIRE(queue.size() == reference.size());
    REQUIRE(queue.empty() == reference.empty());
  }
}

// The engine's order: (time, insertion sequence). Equal times pop in insertion order.
#include <doctest/doctest.h>

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

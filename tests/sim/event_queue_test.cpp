// The engine's order: (time, insertion sequence). Equal times pop in insertion order, whatever
// the queue's layout.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
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

TEST_CASE("the thread's loop statistics count every engine's events and what waited after each pop") {
  const EventLoopStats before = Engine::thread_loop_stats();
  for (int engines = 0; engines < 2; ++engines) {
    Engine engine;
    Recorder recorder;
    const auto id = engine.add_handler(recorder);
    for (int e = 0; e < 4; ++e) engine.schedule(e, id, 0, 0);
    engine.run();
  }
  const EventLoopStats& after = Engine::thread_loop_stats();
  CHECK(after.events - before.events == 8);
  CHECK(after.pending_sum - before.pending_sum == 2 * (3 + 2 + 1 + 0));
  CHECK(after.wall_s >= before.wall_s);
}

TEST_CASE("a negative delay is refused") {
  Engine engine;
  Recorder recorder;
  const auto id = engine.add_handler(recorder);
  CHECK_THROWS_WITH(engine.schedule(-1.0, id, 0, 0), "event scheduled with a negative or NaN delay");
}

TEST_CASE("the queue pops in the order of a sorted (time, sequence) list under random pushes") {
  // Times on a coarse grid so that many tie; pops interleave with pushes (an engine's handler
  // pushes right after a pop, often at the time just popped) and runs of either.
  EventQueue queue;
  std::vector<Event> reference;  // every event pushed and not yet popped
  std::mt19937_64 random(12);
  std::uint64_t sequence = 0;  // each push's number, carried as its payload: the reference's tie-breaker
  double now = 0;
  for (int step = 0; step < 20000; ++step) {
    const auto roll = random() % 8;
    if (roll < 4 || reference.empty()) {
      const double time = now + static_cast<double>(random() % 16) * 0.25;
      queue.push(time, 0, 0, sequence);
      reference.push_back(Event{time, 0, 0, sequence});
      ++sequence;
    } else {
      const auto earliest = std::min_element(
          reference.begin(), reference.end(), [](const Event& a, const Event& b) {
            return a.time != b.time ? a.time < b.time : a.payload < b.payload;
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

TEST_CASE("the queue keeps (time, sequence) order over times of every magnitude and refuses the past") {
  // Delays from 1e-12 s to 1e4 s spread the events over buckets of every exponent; each pop is
  // followed by pushes from its time, as an engine's handlers make them.
  EventQueue queue;
  std::vector<Event> reference;
  std::mt19937_64 random(7);
  std::uint64_t sequence = 0;  // each push's number, carried as its payload: the reference's tie-breaker
  const auto push = [&](double time) {
    queue.push(time, 0, 0, sequence);
    reference.push_back(Event{time, 0, 0, sequence});
    ++sequence;
  };
  for (int e = 0; e < 64; ++e) push(std::ldexp(1.0, static_cast<int>(random() % 60) - 40));
  push(-0.0);  // the same time as +0: it pops before later pushes at 0 and after earlier ones
  push(0.0);
  double now = 0;
  for (int step = 0; step < 5000; ++step) {
    const auto earliest = std::min_element(
        reference.begin(), reference.end(), [](const Event& a, const Event& b) {
          return a.time != b.time ? a.time < b.time : a.payload < b.payload;
        });
    const Event popped = queue.pop();
    REQUIRE(popped.payload == earliest->payload);
    now = popped.time;
    reference.erase(earliest);
    const int pushes = static_cast<int>(random() % 3);
    for (int p = 0; p < pushes; ++p)
      push(random() % 4 == 0 ? now : now + std::ldexp(1.0, static_cast<int>(random() % 53) - 40));
    if (reference.empty()) push(now);
  }
  REQUIRE(now > 0);
  CHECK_THROWS_WITH(queue.push(now / 2, 0, 0, 0), "event queued before the last event popped");
  CHECK_THROWS_WITH(queue.push(-1.0, 0, 0, 0), "event queued at a negative or NaN time");
  CHECK(queue.size() == reference.size());
}

namespace {
// Records, for every prefetch and every handled event, its payload and stage (2 = handled).
struct LookaheadRecorder : EventHandler {
  void handle(const Event& e) override { calls.push_back({e.payload, 2}); }
  void prefetch(const Event& e, Lookahead stage) const override {
    calls.push_back({e.payload, stage == Lookahead::kFar ? 0 : 1});
  }
  mutable std::vector<std::pair<std::uint64_t, int>> calls;
};
}  // namespace

TEST_CASE("the engine prefetches events queued at the time being popped, far then near, before each is handled") {
  Engine engine;
  LookaheadRecorder recorder;
  const auto id = engine.add_handler(recorder);
  constexpr std::uint64_t kSameTime = 40;
  // Each schedule at 1 s is followed by one at another time, so that none joins a batch: the 40
  // events at 1 s are 40 entries of the queue.
  for (std::uint64_t i = 0; i < kSameTime; ++i) {
    engine.schedule(1.0, id, 0, i);
    engine.schedule(2.0 + static_cast<double>(i), id, 0, 1000 + i);  // alone at its time
  }
  engine.run();
  std::vector<int> last_stage(kSameTime + 1, -1);
  std::size_t handled = 0, prefetched = 0;
  for (const auto& [payload, stage] : recorder.calls) {
    if (payload >= 1000) {
      CHECK(stage == 2);
      continue;
    }
    REQUIRE(payload < kSameTime);
    if (stage == 2) {
      CHECK(payload == handled++);  // prefetching never reorders
    } else {
      CHECK(payload > handled);  // an event still queued behind the one popped, never that one
      CHECK(stage > last_stage[payload]);  // far before near, each once
      ++prefetched;
    }
    last_stage[payload] = stage;
  }
  CHECK(handled == kSameTime);
  CHECK(prefetched > kSameTime);  // most events got both stages
}

TEST_CASE("a batch of events scheduled together is prefetched event by event when it is queued ahead") {
  Engine engine;
  LookaheadRecorder recorder;
  const auto id = engine.add_handler(recorder);
  // Ten entries at 1 s (each alone, split by a schedule at 5 s), then a batch of three at 1 s:
  // the batch is the ninth entry behind the first popped, so the far look-ahead reaches it.
  for (std::uint64_t i = 0; i < 10; ++i) {
    engine.schedule(1.0, id, 0, i);
    engine.schedule(5.0, id, 0, 1000);
  }
  for (std::uint64_t i = 100; i < 103; ++i) engine.schedule(1.0, id, 0, i);
  engine.run();
  for (std::uint64_t member = 100; member < 103; ++member) {
    std::vector<int> stages;
    for (const auto& [payload, stage] : recorder.calls)
      if (payload == member) stages.push_back(stage);
    CHECK(stages == std::vector<int>{0, 1, 2});  // far, near, handled
  }
}

namespace {
// Schedules, from each event it handles, up to three more at delays of 0, 0.25 or 0.5 s (so
// runs of schedules at one time, which the engine batches, are common), numbering every
// schedule; it records the order in which the engine hands them back.
struct Brancher : EventHandler {
  explicit Brancher(Engine& e) : engine(e), id(e.add_handler(*this)) {}
  void add(double delay) {
    pending.push_back({engine.now() + delay, next});
    engine.schedule(delay, id, 0, next++);
  }
  void handle(const Event& e) override {
    handled.push_back({e.time, e.payload});
    if (next >= 20000) return;
    for (auto n = random() % 4; n > 0; --n) add(0.25 * static_cast<double>(random() % 3));
  }
  Engine& engine;
  std::uint32_t id;
  std::mt19937_64 random{3};
  std::uint64_t next = 0;
  std::vector<std::pair<double, std::uint64_t>> pending;  // (time, number) of every schedule
  std::vector<std::pair<double, std::uint64_t>> handled;
};
}  // namespace

TEST_CASE("batching schedules at one time keeps the (time, sequence) order, the clock and the counts") {
  Engine engine;
  Brancher brancher(engine);
  for (int i = 0; i < 8; ++i) brancher.add(0);
  engine.run();
  std::vector<std::pair<double, std::uint64_t>> expected = brancher.pending;
  std::stable_sort(expected.begin(), expected.end());  // by time, then by number
  INFO("events scheduled: ", brancher.next);
  REQUIRE(brancher.next >= 20000);
  CHECK(brancher.handled == expected);
  CHECK(engine.events_processed() == brancher.next);
  CHECK(engine.events_pending() == 0);
}

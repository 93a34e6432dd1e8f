#include "core/engine.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "core/random.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

TEST_CASE("events run in time order, ties in schedule order") {
  Simulator sim;
  std::vector<int> order;
  sim.at(20_ns, [&] { order.push_back(3); });
  sim.at(10_ns, [&] { order.push_back(1); });
  sim.at(10_ns, [&] { order.push_back(2); });
  sim.at(20_ns, [&] { order.push_back(4); });
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 3, 4});
  CHECK(sim.now() == 20_ns);
  CHECK(sim.events_run() == 4);
}

TEST_CASE("a cancelled event does not run, a stale cancel is harmless") {
  Simulator sim;
  int ran = 0;
  EventId a = sim.after(5_ns, [&] { ran += 1; });
  EventId b = sim.after(6_ns, [&] { ran += 10; });
  CHECK(sim.pending() == 2);
  sim.cancel(a);
  CHECK(sim.pending() == 1);
  sim.cancel(a);
  CHECK(sim.pending() == 1);
  sim.run();
  sim.cancel(b);
  sim.cancel(EventId{});
  CHECK(ran == 10);
  CHECK(sim.pending() == 0);
  // The slot of b is reused; the stale id must not cancel the new event.
  sim.after(1_ns, [&] { ran += 100; });
  sim.cancel(b);
  sim.run();
  CHECK(ran == 110);
}

TEST_CASE("run(until) stops before later events and leaves them pending") {
  Simulator sim;
  int ran = 0;
  sim.after(5_us, [&] { ++ran; });
  sim.after(15_us, [&] { ++ran; });
  sim.run(10_us);
  CHECK(ran == 1);
  CHECK(sim.now() == 10_us);
  CHECK(sim.pending() == 1);
  // Scheduling between now and the pending event still orders correctly.
  sim.at(12_us, [&] { ran += 10; });
  sim.at(10_us, [&] { ran += 100; });
  sim.run(12_us);
  CHECK(ran == 111);
  CHECK(sim.now() == 12_us);
  sim.run();
  CHECK(ran == 112);
  CHECK(sim.now() == 15_us);
}

TEST_CASE("an event in the past runs now; stop() ends run() after the current event") {
  Simulator sim;
  std::vector<int> order;
  sim.at(10_ns, [&] {
    order.push_back(1);
    sim.at(5_ns, [&] { order.push_back(3); });  // before now: runs at now, after those already due
    sim.stop();
  });
  sim.at(10_ns, [&] { order.push_back(2); });
  sim.run();
  CHECK(order == std::vector<int>{1});
  CHECK(sim.now() == 10_ns);
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(sim.now() == 10_ns);
}

TEST_CASE("closures up to 64 bytes are stored, run once and destroyed") {
  Simulator sim;
  auto token = std::make_shared<int>(7);
  struct Big {
    std::shared_ptr<int> p;
    char pad[40];
  };
  Big big{token, {}};
  int seen = 0;
  sim.after(1_ns, [big, &seen] { seen = *big.p; });
  static_assert(sizeof(Big) + sizeof(int*) == 64);  // the largest closure that fits
  CHECK(token.use_count() == 3);                    // token, big, the queued closure
  sim.run();
  CHECK(seen == 7);
  CHECK(token.use_count() == 2);
  // A cancelled closure and one still pending at clear() are destroyed too.
  EventId id = sim.after(1_ns, [big] {});
  sim.after(2_ns, [big] {});
  CHECK(token.use_count() == 4);
  sim.cancel(id);
  CHECK(token.use_count() == 3);
  sim.clear();
  CHECK(token.use_count() == 2);
  CHECK(sim.pending() == 0);
  sim.run();
  CHECK(sim.events_run() == 1);
}

TEST_CASE("a cancelled event's slot is free at once, its queue entry skipped when its time comes") {
  // A timer rearmed many times before it is due (a PFC pause, DCQCN's
  // rate timer): its cancelled entries wait in the queue, their slots not.
  Simulator sim;
  int ran = 0;
  EventId timer;
  for (int i = 0; i < 10000; ++i) {
    sim.cancel(timer);
    timer = sim.after(Time::us(100 + i), [&ran] { ++ran; });
    sim.after(Time::ns(i), [] {});  // something else reuses the freed slots meanwhile
  }
  CHECK(sim.pending() == 10001);
  CHECK(sim.slots() <= 11 * 1024);  // not 20,000: the 9,999 cancelled ones' slots were reused
  sim.run();
  CHECK(ran == 1);
  CHECK(sim.now() == Time::us(100 + 9999));
  CHECK(sim.events_run() == 10001);
}

TEST_CASE("a closure destroyed by clear() may schedule and cancel") {
  Simulator sim;
  struct Rescheduler {
    Simulator* sim;
    int* destroyed;
    bool armed = true;
    Rescheduler(Simulator* s, int* d) : sim(s), destroyed(d) {}
    Rescheduler(Rescheduler&& o) noexcept
        : sim(o.sim), destroyed(o.destroyed), armed(std::exchange(o.armed, false)) {}
    ~Rescheduler() {
      if (!armed) return;
      ++*destroyed;
      if (*destroyed < 3) sim->after(1_ns, Rescheduler(sim, destroyed));
    }
    void operator()() {}
  };
  int destroyed = 0;
  sim.after(1_ns, Rescheduler(&sim, &destroyed));
  sim.clear();
  CHECK(destroyed == 3);
  CHECK(sim.pending() == 0);
}

TEST_CASE("the queue agrees with a reference ordering on random workloads") {
  // Mixed delays (ties, picoseconds to seconds), cancels, nested scheduling
  // and run(until) slices, checked against (time, schedule order).
  struct World {
    Simulator sim;
    Rng rng;
    std::map<std::pair<int64_t, uint64_t>, uint64_t> expected;  // (time, n) -> n
    std::map<uint64_t, std::pair<int64_t, EventId>> live;       // n -> (time, id)
    std::vector<uint64_t> ran;
    uint64_t next = 0;

    explicit World(uint64_t seed) : rng(seed) {}
    Time delay() {
      switch (rng.between(0, 7)) {
        case 0:
          return Time();  // now: ties
        case 1:
          return Time::ps(static_cast<int64_t>(rng.between(1, 16)));
        case 2:
          return Time::ps(static_cast<int64_t>(rng.between(1, 100'000)));
        case 3:
          return Time::ns(static_cast<int64_t>(rng.between(1, 100'000)));
        case 4:
          return Time::ms(static_cast<int64_t>(rng.between(1, 1'000)));
        case 5:
          return Time::ps(static_cast<int64_t>(rng.between(0, 3)) * 1'000);
        default: {  // onto a coarse grid: events scheduled at different times tie
          const int64_t now = sim.now().count(), grid = 1 << 20;
          return Time::ps((now / grid + static_cast<int64_t>(rng.between(1, 4))) * grid - now);
        }
      }
    }
    void schedule(int depth) {
      const uint64_t n = next++;
      const Time when = sim.now() + delay();
      const EventId id = sim.at(when, [this, n, depth] { fire(n, depth); });
      expected[{when.count(), n}] = n;
      live[n] = {when.count(), id};
    }
    void fire(uint64_t n, int depth) {
      ran.push_back(n);
      live.erase(n);
      if (depth < 3) {
        const uint64_t k = rng.between(0, 2);
        for (uint64_t j = 0; j < k; ++j) schedule(depth + 1);
      }
      if (!live.empty() && rng.chance(0.2)) {  // cancel a random pending event
        auto it = live.lower_bound(rng.between(0, next));
        if (it == live.end()) it = live.begin();
        sim.cancel(it->second.second);
        expected.erase({it->second.first, it->first});
        live.erase(it);
      }
    }
  };
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    World w(seed);
    for (int i = 0; i < 600; ++i) w.schedule(0);
    Time until;
    while (w.sim.pending() != 0) {
      until = until + Time::ns(static_cast<int64_t>(w.rng.between(1, 400'000'000)));
      w.sim.run(until);
      CHECK(w.sim.now() <= until);
      CHECK(w.sim.pending() == w.live.size());
    }
    std::vector<uint64_t> want;
    for (const auto& [k, n] : w.expected) want.push_back(n);
    CHECK(w.ran.size() == want.size());
    CHECK(w.ran == want);
    CHECK(w.ran.size() > 1000);
  }
}

TEST_CASE("run(until) ends at the last event when only cancelled events lie beyond") {
  rdmasim::Simulator sim;
  using namespace rdmasim::literals;
  int ran = 0;
  sim.after(5_us, [&] { ++ran; });
  rdmasim::EventId late = sim.after(50_us, [&] { ++ran; });
  sim.cancel(late);
  sim.run(20_us);
  CHECK(ran == 1);
  CHECK(sim.now() == 5_us);  // nothing live remains: time stays at the last event
  sim.after(100_us, [&] { ++ran; });
  sim.run(30_us);
  CHECK(sim.now() == 30_us);  // a live event lies beyond: time reaches the limit
}

TEST_CASE("order holds while the queue moves between its small and large forms") {
  // Waves of events: each wave schedules a random number of events (a few,
  // or hundreds), many of them at equal times, so the queue repeatedly
  // grows past the small form's size and shrinks back below it.
  Simulator sim;
  Rng rng(7);
  std::vector<std::pair<int64_t, uint64_t>> ran;  // (time, schedule number)
  uint64_t next = 0;
  std::function<void()> wave = [&] {
    const uint64_t n = rng.chance(0.5) ? rng.between(1, 8) : rng.between(20, 300);
    for (uint64_t k = 0; k < n; ++k) {
      const Time when = sim.now() + Time::ns(static_cast<int64_t>(rng.between(0, 5)) * 100);
      const uint64_t id = next++;
      sim.at(when, [&ran, &sim, id] { ran.emplace_back(sim.now().count(), id); });
    }
    if (next < 20000) sim.after(Time::ns(static_cast<int64_t>(rng.between(0, 700))), wave);
  };
  sim.after(Time::ns(1), wave);
  sim.run();
  CHECK(ran.size() == next);
  CHECK(std::is_sorted(ran.begin(), ran.end()));  // by time, ties in schedule order
}

TEST_CASE("ties run in key order: the scheduling context, then its own sequence") {
  Simulator sim;
  std::vector<int> order;
  {
    Simulator::Scope as(sim, 2);
    sim.at(10_ns, [&] { order.push_back(3); });  // (2, 1)
    sim.at(10_ns, [&] { order.push_back(4); });  // (2, 2)
  }
  {
    Simulator::Scope as(sim, 1);
    sim.at(10_ns, [&] { order.push_back(2); });  // (1, 1): before context 2's, though scheduled later
  }
  sim.at(10_ns, [&] { order.push_back(1); });  // (0, 1): the experiment's first
  CHECK(sim.context() == 0);
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 3, 4});
}

TEST_CASE("an event runs in its target context; one for a foreign context is not queued") {
  Simulator sim;
  std::vector<Context> ran_as;
  const uint64_t key = sim.next_order();  // the experiment's key, for an event that runs as node 3
  sim.place(5_ns, key, 3, [&] {
    ran_as.push_back(sim.context());
    sim.after(1_ns, [&] { ran_as.push_back(sim.context()); });  // inherits 3
  });
  sim.run();
  CHECK(ran_as == std::vector<Context>{3, 3});
  CHECK(sim.context() == 0);
  std::vector<bool> foreign(5, false);
  foreign[4] = true;
  sim.set_foreign(foreign);
  int ran = 0;
  CHECK(!sim.place(sim.now() + 1_ns, sim.next_order(), 4, [&] { ++ran; }));
  CHECK(sim.place(sim.now() + 1_ns, sim.next_order(), 2, [&] { ++ran; }));
  CHECK(sim.pending() == 1);
  sim.run();
  CHECK(ran == 1);
}

TEST_CASE("the radix heap keeps key order for ties formed in a bucket and at the current instant") {
  Simulator sim;
  std::vector<int> order;
  // Enough events that the radix heap holds them, two at one later instant
  // scheduled by contexts in reverse order.
  for (int i = 0; i < 100; ++i) sim.at(Time::ns(1000 + i), [] {});
  {
    Simulator::Scope as(sim, 9);
    sim.at(500_ns, [&] {
      order.push_back(2);
      Simulator::Scope as1(sim, 1);
      sim.at(sim.now(), [&] { order.push_back(3); });  // at the current instant
    });
  }
  {
    Simulator::Scope as(sim, 5);
    sim.at(500_ns, [&] { order.push_back(1); });
  }
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 3});
}

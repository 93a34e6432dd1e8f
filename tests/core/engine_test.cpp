#include <doctest/doctest.h>

#include <vector>

#include "core/engine.hpp"

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
}

TEST_CASE("a cancelled event does not run, a stale cancel is harmless") {
  Simulator sim;
  int ran = 0;
  EventId a = sim.after(5_ns, [&] { ran += 1; });
  EventId b = sim.after(6_ns, [&] { ran += 10; });
  sim.cancel(a);
  sim.run();
  sim.cancel(b);
  CHECK(ran == 10);
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
  sim.run();
  CHECK(ran == 2);
}

#include "core/task.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

struct Log {
  Simulator& sim;
  std::vector<std::string> lines;
  void add(const std::string& who) {
    lines.push_back(std::to_string(sim.now().count() / 1000) + "ns " + who);
  }
};

Task ticker(Simulator& sim, Log& log, std::string name, Time period, int n) {
  for (int i = 0; i < n; ++i) {
    log.add(name + " " + std::to_string(i));
    co_await sleep(sim, period);
  }
  log.add(name + " done");
}

Task child(Simulator& sim, Log& log, int* result) {
  log.add("child start");
  co_await sleep(sim, 5_ns);
  *result = 42;
  log.add("child end");
}

Task parent(Simulator& sim, Log& log) {
  int r = 0;
  log.add("parent start");
  co_await child(sim, log, &r);
  log.add("parent got " + std::to_string(r));
  co_await child(sim, log, &r);  // a second child after the first finished
  log.add("parent end");
}

Task waiter(Simulator& sim, Trigger& t, Log& log, std::string name) {
  log.add(name + " waits");
  co_await t;
  log.add(name + " woke");
  co_await t;
  log.add(name + " woke again");
  (void)sim;
}

Task holds(std::shared_ptr<int> token, Simulator& sim, Time d) {
  co_await sleep(sim, d);
  (void)token;
}

}  // namespace

TEST_CASE("two coroutines interleave in simulated time, the same way every run") {
  auto run_once = [] {
    Simulator sim;
    Log log{sim, {}};
    ticker(sim, log, "a", 10_ns, 3);
    ticker(sim, log, "b", 15_ns, 2);
    sim.run();
    return log.lines;
  };
  const auto lines = run_once();
  // Eager start: both log at 0 before run(). At 30ns both wake: b's wake-up
  // was scheduled at 15ns, a's at 20ns, so b runs first.
  CHECK(lines == std::vector<std::string>{"0ns a 0", "0ns b 0", "10ns a 1", "15ns b 1", "20ns a 2",
                                          "30ns b done", "30ns a done"});
  CHECK(run_once() == lines);
}

TEST_CASE("co_await on a Task resumes the parent when the child finishes") {
  Simulator sim;
  Log log{sim, {}};
  parent(sim, log);
  CHECK(log.lines == std::vector<std::string>{"0ns parent start", "0ns child start"});
  sim.run();
  CHECK(log.lines == std::vector<std::string>{"0ns parent start", "0ns child start", "5ns child end",
                                              "5ns parent got 42", "5ns child start", "10ns child end",
                                              "10ns parent end"});
}

TEST_CASE("a held Task reports done and may be awaited after it finished") {
  Simulator sim;
  int r = 0;
  Log log{sim, {}};
  Task t = child(sim, log, &r);
  CHECK_FALSE(t.done());
  sim.run();
  CHECK(t.done());
  CHECK(r == 42);
  auto later = [](Task& t, Log& log) -> Task {
    co_await t;  // already done: passes straight on
    log.add("after");
  };
  later(t, log);
  CHECK(log.lines.back() == "5ns after");
}

TEST_CASE("a Trigger resumes one waiter per notify, through the engine, in FIFO order") {
  Simulator sim;
  Log log{sim, {}};
  Trigger t(sim);
  waiter(sim, t, log, "x");
  waiter(sim, t, log, "y");
  CHECK(t.has_waiter());
  sim.at(10_ns, [&] {
    t.notify();
    log.add("notified");  // the waiter has not run yet: no recursion into it
  });
  sim.at(20_ns, [&] {
    t.notify();
    t.notify();
  });
  sim.run();
  CHECK(log.lines == std::vector<std::string>{"0ns x waits", "0ns y waits", "10ns notified", "10ns x woke",
                                              "20ns y woke", "20ns x woke again"});
  CHECK(t.has_waiter());  // y waits again
}

TEST_CASE("a notify with nobody waiting is kept for the next wait, once") {
  Simulator sim;
  Log log{sim, {}};
  Trigger t(sim);
  t.notify();
  t.notify();  // not counted twice
  waiter(sim, t, log, "z");
  CHECK(log.lines == std::vector<std::string>{"0ns z waits", "0ns z woke"});
  CHECK(t.has_waiter());
}

TEST_CASE("coroutines still suspended when the simulator goes are destroyed, not leaked") {
  auto token = std::make_shared<int>(1);
  {
    Simulator sim;
    holds(token, sim, 1_us);
    holds(token, sim, 2_us);
    CHECK(token.use_count() == 3);
    sim.run(1500_ns);
    CHECK(token.use_count() == 2);  // the first finished and freed its frame
  }
  CHECK(token.use_count() == 1);

  // A parent awaiting a dropped child is dropped with it, and a Trigger
  // destroyed with waiters drops them.
  {
    Simulator sim;
    auto outer = [](std::shared_ptr<int> tok, Simulator& sim) -> Task {
      co_await holds(tok, sim, 1_us);
      (void)tok;
    };
    outer(token, sim);
    CHECK(token.use_count() == 3);
    sim.clear();
    CHECK(token.use_count() == 1);
    auto wait_on = [](std::shared_ptr<int> tok, Trigger& t) -> Task {
      co_await t;
      (void)tok;
    };
    {
      Trigger t(sim);
      wait_on(token, t);
      CHECK(token.use_count() == 2);
    }
    CHECK(token.use_count() == 1);
  }
}

TEST_CASE("sleep(0) yields to events already due at this instant") {
  Simulator sim;
  std::vector<int> order;
  sim.at(Time(), [&] { order.push_back(1); });
  auto yielder = [](Simulator& sim, std::vector<int>& order) -> Task {
    order.push_back(0);
    co_await sleep(sim, Time());
    order.push_back(2);
  };
  yielder(sim, order);
  sim.run();
  CHECK(order == std::vector<int>{0, 1, 2});
}

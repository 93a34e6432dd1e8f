#include "nodes/host/cpu/cpu.hpp"

#include <doctest/doctest.h>

#include "core/task.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

Time at(const CpuTimes& t, CpuUse u) { return t[static_cast<size_t>(u)]; }

Time total(const CpuTimes& t) {
  Time s;
  for (Time x : t) s += x;
  return s;
}

// Runs `t` of `use` on p's core, then notes when it got it.
Task burst(Cpu& cpu, Process& p, CpuUse use, Time t, Time& done, Simulator& sim) {
  co_await cpu.run(p, use, t);
  done = sim.now();
}

// Sleeps until `when`, then an interrupt costing `cost` wakes p, which runs `t`.
Task woken(Cpu& cpu, Process& p, Time when, Time cost, Time t, Time& done, Simulator& sim) {
  co_await sleep_until(sim, when);
  co_await cpu.interrupt(p, cost, CpuUse::user, t);
  done = sim.now();
}

// Computes `work` a `chunk` at a time.
Task compute(Cpu& cpu, Process& p, Time work, Time chunk, Time& done, Simulator& sim) {
  for (Time got; got < work; got += chunk) co_await cpu.run(p, CpuUse::user, chunk);
  done = sim.now();
}

// Runs a poll burst, spins until `until`, then runs once more.
Task spinner(Cpu& cpu, Process& p, Trigger& until, Time& done, Simulator& sim) {
  co_await cpu.run(p, CpuUse::user, 50_ns);
  cpu.spin(p);
  co_await until;
  co_await cpu.run(p, CpuUse::user, 50_ns);
  done = sim.now();
}

}  // namespace

TEST_CASE("a hard IRQ preempts a user burst and delays it by exactly its cost") {
  Simulator sim;
  Cpu cpu(sim, 1, 1_us);
  Process& p = cpu.spawn("p", Process::Kind::io);
  Process& q = cpu.spawn("q", Process::Kind::io);
  Time p_done, q_done;
  burst(cpu, p, CpuUse::user, 10_us, p_done, sim);
  woken(cpu, q, 3_us, 2_us, 100_ns, q_done, sim);
  sim.run();
  // p: 1us switch in + 10us of work + the 2us handler in the middle.
  CHECK(p_done == 13_us);
  // q, woken at 5us, waits for p's burst (I/O processes do not preempt
  // one another), then pays its own switch.
  CHECK(q_done == 13_us + 1_us + 100_ns);
  const CpuTimes t = cpu.times(0);
  CHECK(at(t, CpuUse::irq) == 2_us);
  CHECK(at(t, CpuUse::user) == 10_us + 100_ns);
  CHECK(at(t, CpuUse::syscall) == 2_us);
  CHECK(total(t) == sim.now());
  CHECK(cpu.busy() == sim.now());
  CHECK(cpu.context_switches() == 2);
}

TEST_CASE("the categories of every core add up to the run's length, idle included") {
  Simulator sim;
  Cpu cpu(sim, 2, 500_ns);
  Process& a = cpu.spawn("a", Process::Kind::io);
  Process& b = cpu.spawn("b", Process::Kind::compute);
  CHECK(a.core() == 0);
  CHECK(b.core() == 1);
  Time a_done, b_done, w_done;
  burst(cpu, a, CpuUse::syscall, 3_us, a_done, sim);
  compute(cpu, b, 20_us, 5_us, b_done, sim);
  woken(cpu, a, 10_us, 1_us, 1_us, w_done, sim);
  sim.at(40_us, [] {});
  sim.run();
  CHECK(b_done == 20_us + 500_ns);  // alone on core 1: one switch, no other wait
  CHECK(w_done == 10_us + 1_us + 500_ns + 1_us);
  for (int c = 0; c < 2; ++c) CHECK(total(cpu.times(c)) == 40_us);
  CHECK(at(cpu.times(0), CpuUse::idle) == 40_us - (500_ns + 3_us) - (1_us + 500_ns + 1_us));
  CHECK(cpu.busy() == 80_us - at(cpu.times(0), CpuUse::idle) - at(cpu.times(1), CpuUse::idle));
}

TEST_CASE("a spinning process keeps its core from a compute process; sleeping frees it") {
  Simulator sim;
  Cpu cpu(sim, 1, 1_us);
  Process& io = cpu.spawn("io", Process::Kind::io);
  Process& calc = cpu.spawn("calc", Process::Kind::compute);
  Trigger cqe(sim);
  Time io_done, calc_done;
  spinner(cpu, io, cqe, io_done, sim);
  compute(cpu, calc, 10_us, 10_us, calc_done, sim);
  sim.at(20_us, [&] { cqe.notify(); });
  sim.run();
  // io: 1us switch + 50ns poll, spins until 20us, polls 50ns more.
  CHECK(io_done == 20_us + 50_ns);
  CHECK(at(cpu.times(0), CpuUse::poll) == 20_us - 1_us - 50_ns);
  // calc had to wait for the spin to end: its switch, then its 10us.
  CHECK(calc_done == 20_us + 50_ns + 1_us + 10_us);

  // The same with io sleeping instead: calc computes meanwhile.
  Simulator sim2;
  Cpu cpu2(sim2, 1, 1_us);
  Process& io2 = cpu2.spawn("io", Process::Kind::io);
  Process& calc2 = cpu2.spawn("calc", Process::Kind::compute);
  Time io2_done, calc2_done;
  woken(cpu2, io2, 5_us, 1_us, 50_ns, io2_done, sim2);
  compute(cpu2, calc2, 10_us, 10_us, calc2_done, sim2);
  sim2.run();
  // The IRQ at 5us preempts calc; io is woken, preempts calc's chunk
  // (wake-up preemption), and calc resumes after io with a switch back.
  CHECK(io2_done == 5_us + 1_us + 1_us + 50_ns);
  CHECK(calc2_done == 1_us + 10_us + 1_us + 1_us + 50_ns + 1_us);
  CHECK(total(cpu2.times(0)) == sim2.now());
}

TEST_CASE("compute processes on one core take turns a chunk at a time") {
  Simulator sim;
  Cpu cpu(sim, 1, Time{});
  Process& a = cpu.spawn("a", Process::Kind::compute);
  Process& b = cpu.spawn("b", Process::Kind::compute);
  Time a_done, b_done;
  compute(cpu, a, 30_us, 10_us, a_done, sim);
  compute(cpu, b, 30_us, 10_us, b_done, sim);
  sim.run();
  CHECK(a_done == 50_us);  // a b a b a | b
  CHECK(b_done == 60_us);
  CHECK(cpu.context_switches() == 6);
}

namespace {

// Spins for at most `limit`, then gives up the core (hybrid polling's sleep).
Task spin_then_sleep(Cpu& cpu, Process& p, Simulator& sim, Time limit) {
  co_await cpu.run(p, CpuUse::user, 50_ns);
  cpu.spin(p);
  co_await sleep(sim, limit);
  cpu.stop_spin(p);
}

}  // namespace

TEST_CASE("a process that stops spinning frees its core at once") {
  Simulator sim;
  Cpu cpu(sim, 1, 1_us);
  Process& io = cpu.spawn("io", Process::Kind::io);
  Process& calc = cpu.spawn("calc", Process::Kind::compute);
  Time calc_done;
  spin_then_sleep(cpu, io, sim, 5_us);
  compute(cpu, calc, 10_us, 10_us, calc_done, sim);
  sim.run();
  // io: switch 1us + 50ns, spins 5us; then calc: switch, 10us.
  CHECK(calc_done == 1_us + 50_ns + 5_us + 1_us + 10_us);
  CHECK(at(cpu.times(0), CpuUse::poll) == 5_us);
}

TEST_CASE("IRQs queue behind one another on their process's core only") {
  Simulator sim;
  Cpu cpu(sim, 2, Time{});
  Process& a = cpu.spawn("a", Process::Kind::io);
  Process& b = cpu.spawn("b", Process::Kind::io);
  Process& c = cpu.spawn("c", Process::Kind::io);  // back on core 0, with a
  CHECK(c.core() == 0);
  Time a_done, b_done, c_done;
  woken(cpu, a, 1_us, 3_us, 1_us, a_done, sim);
  woken(cpu, c, 2_us, 3_us, 1_us, c_done, sim);
  woken(cpu, b, 2_us, 3_us, 1_us, b_done, sim);
  sim.run();
  // Core 0: a's handler 1-4us, c's 4-7us (it waited), then a 7-8, c 8-9.
  CHECK(a_done == 8_us);
  CHECK(c_done == 9_us);
  // Core 1 is b's alone: handler 2-5us, then b.
  CHECK(b_done == 6_us);
  CHECK(at(cpu.times(0), CpuUse::irq) == 6_us);
  CHECK(at(cpu.times(1), CpuUse::irq) == 3_us);
}

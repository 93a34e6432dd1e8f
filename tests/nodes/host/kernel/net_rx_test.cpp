#include "nodes/host/kernel/net_rx.hpp"

#include <doctest/doctest.h>

#include "core/packet.hpp"
#include "core/task.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

Time at(const CpuTimes& t, CpuUse u) { return t[static_cast<size_t>(u)]; }

HostConfig config(Completion mode) {
  HostConfig c;
  c.completion = mode;
  c.pcie.latency = Time{};  // frames and interrupts arrive at once: the counts are exact
  c.interrupt_cost = 1_us;
  c.kernel.driver_rx = 100_ns;
  c.kernel.ip_rx = 100_ns;
  c.kernel.transport_rx = 100_ns;
  return c;
}

struct Rig {
  explicit Rig(const HostConfig& c) : cfg(c), cpu(sim, 1, 1_us), rx(sim, cpu, cfg) {
    rx.set_deliver([this](Packet) { ++delivered; });
  }
  void frames(int n) {
    for (int i = 0; i < n; ++i) {
      Packet p = pool.make();
      p.push_back(60);
      rx.receive(std::move(p));
    }
  }
  // `n` frames, one every `gap`, from `start`.
  void paced(int n, Time start, Time gap) {
    for (int i = 0; i < n; ++i) sim.at(start + gap * i, [this] { frames(1); });
  }
  HostConfig cfg;
  Simulator sim;
  PacketPool pool;
  Cpu cpu;
  NetRx rx;
  int delivered = 0;
};

// A program that wants `t` of CPU in 100ns bursts; notes when it got it.
Task program(Cpu& cpu, Process& p, Time t, Time& done, Simulator& sim) {
  for (Time got; got < t; got += 100_ns) co_await cpu.run(p, CpuUse::user, 100_ns);
  done = sim.now();
}

}  // namespace

TEST_CASE("napi: one interrupt, then polls of napi_budget frames with the interrupt masked") {
  Rig r(config(Completion::napi));
  r.frames(200);
  CHECK(r.rx.stats().interrupts == 1);
  r.sim.run(1500_ns);  // the handler has run, the first poll is under way
  CHECK(r.rx.irq_masked());
  r.frames(10);  // while masked: no interrupt, the poll takes them
  r.sim.run();
  CHECK(r.rx.stats().interrupts == 1);
  CHECK(r.delivered == 210);
  CHECK(r.rx.stats().polls == 4);  // 64, 64, 64, 18 (< 64: the ring ran dry)
  CHECK_FALSE(r.rx.irq_masked());  // re-armed when it did
  const CpuTimes t = r.cpu.times(0);
  CHECK(at(t, CpuUse::irq) == 1_us);
  CHECK(at(t, CpuUse::softirq) == 300_ns * 210);
  // Re-armed: the next frame interrupts again.
  r.frames(1);
  r.sim.run();
  CHECK(r.rx.stats().interrupts == 2);
  CHECK(r.delivered == 211);
}

TEST_CASE("napi: the budget is napi_budget frames a poll") {
  HostConfig c = config(Completion::napi);
  c.napi_budget = 16;
  Rig r(c);
  r.frames(100);
  r.sim.run();
  CHECK(r.delivered == 100);
  CHECK(r.rx.stats().polls == 7);  // six of 16, one of 4
  CHECK(r.rx.stats().interrupts == 1);
}

TEST_CASE("interrupt mode: a hard IRQ per frame with the driver's work inside it") {
  Rig r(config(Completion::interrupt));
  r.paced(20, Time{}, 5_us);
  r.sim.run();
  CHECK(r.rx.stats().interrupts == 20);
  CHECK(r.delivered == 20);
  const CpuTimes t = r.cpu.times(0);
  CHECK(at(t, CpuUse::irq) == (1_us + 100_ns) * 20);
  CHECK(at(t, CpuUse::softirq) == 200_ns * 20);
}

TEST_CASE("interrupt coalescing: one interrupt for `frames` frames") {
  HostConfig c = config(Completion::interrupt);
  c.interrupt_coalescing.frames = 4;
  c.interrupt_coalescing.delay = 50_us;
  Rig r(c);
  r.paced(16, Time{}, 1_us);
  r.sim.run();
  CHECK(r.delivered == 16);
  CHECK(r.rx.stats().interrupts == 4);
}

TEST_CASE("a full ring drops at the NIC, costing no CPU") {
  HostConfig c = config(Completion::napi);
  c.kernel.rx_ring = 8;
  Rig r(c);
  r.frames(20);
  r.sim.run();
  CHECK(r.rx.stats().ring_drops == 12);
  CHECK(r.delivered == 8);
  CHECK(at(r.cpu.times(0), CpuUse::softirq) == 300_ns * 8);
}

TEST_CASE("interrupt mode: a full backlog drops after the driver's work") {
  HostConfig c = config(Completion::interrupt);
  c.kernel.max_backlog = 5;
  c.interrupt_coalescing.frames = 10;
  c.interrupt_coalescing.delay = 1_us;
  Rig r(c);
  r.frames(10);
  r.sim.run();
  CHECK(r.rx.stats().backlog_drops == 5);
  CHECK(r.delivered == 5);
  CHECK(at(r.cpu.times(0), CpuUse::irq) == 1_us + 100_ns * 10);
}

TEST_CASE("overload: softirq work passes to ksoftirqd, which shares the core with a program") {
  // 300ns of softirq work a frame, one frame every 250ns: more than the core.
  for (Completion mode : {Completion::napi, Completion::interrupt}) {
    CAPTURE(static_cast<int>(mode));
    Rig r(config(mode));
    Process& app = r.cpu.spawn("app", Process::Kind::io, /*fair=*/true);
    Time app_done = Time::max();
    program(r.cpu, app, 1_ms, app_done, r.sim);
    r.paced(40'000, Time{}, 250_ns);  // 10ms of flood
    r.sim.run(10_ms);
    if (mode == Completion::napi) {
      // The interrupt stays masked. Softirq work on IRQ exit starves the
      // program until __do_softirq gives up after 10 rounds of 300 frames
      // (0.9ms); then ksoftirqd and the program share the core.
      CHECK(r.rx.stats().interrupts < 5);
      CHECK(r.rx.stats().ksoftirqd_wakeups == 1);
      // Sharing, the thread stays at most CFS's 1ms granularity ahead: the
      // program's 1ms of work takes about 3ms more.
      CHECK(app_done > 1500_us);
      CHECK(app_done < 4500_us);
    } else {
      // An interrupt a frame takes the core first: the program starves.
      CHECK(app_done > 10_ms);
    }
  }
}

TEST_CASE("threaded napi: polls run in a fair thread from the start") {
  HostConfig c = config(Completion::napi);
  c.kernel.threaded_napi = true;
  Rig r(c);
  Process& app = r.cpu.spawn("app", Process::Kind::io, /*fair=*/true);
  Time app_done = Time::max();
  program(r.cpu, app, 1_ms, app_done, r.sim);
  r.paced(20'000, Time{}, 250_ns);
  r.sim.run(5_ms);
  CHECK(r.rx.ksoftirqd().name() == "napi/0");
  // The program's 1ms takes about 3ms: the thread runs at most CFS's 1ms
  // granularity ahead of it; without the thread it would starve.
  CHECK(at(r.cpu.times(0), CpuUse::softirq) > 2_ms);
  CHECK(app_done > 2_ms);
  CHECK(app_done < 3500_us);
}

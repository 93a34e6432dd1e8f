#include <doctest/doctest.h>

#include "core/packet.hpp"
#include "nodes/host/dpdk/poll_mode_driver.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

Time at(const CpuTimes& t, CpuUse u) { return t[static_cast<size_t>(u)]; }

DpdkConfig config(uint32_t rx_ring) {
  DpdkConfig c;
  c.cores = 1;
  c.burst = 4;
  c.rx_ring = rx_ring;
  c.poll = 20_ns;
  c.rx_frame = 100_ns;
  return c;
}

struct Rig {
  explicit Rig(uint32_t rx_ring = 16) : cpu(sim, 2, 1_us), pmd(sim, cpu, config(rx_ring)) {
    pmd.set_deliver([this](Packet) {
      ++delivered;
      last = sim.now();
    });
    pmd.set_on_drop([this](const Packet&) { ++dropped; });
  }
  void frames(int n) {
    for (int i = 0; i < n; ++i) {
      Packet p = pool.make();
      p.push_back(60);
      pmd.receive(std::move(p), 7);
    }
  }
  Simulator sim;
  PacketPool pool;
  Cpu cpu;
  PollModeDriver pmd;
  int delivered = 0, dropped = 0;
  Time last;
};

}  // namespace

TEST_CASE("dpdk: bursts of up to dpdk_burst frames; the rest of the poll core's time spins") {
  Rig r;
  r.sim.at(10_us, [&r] { r.frames(10); });
  r.sim.run(50_us);
  CHECK(r.delivered == 10);
  CHECK(r.pmd.stats().bursts == 3);  // 4, 4, 2
  CHECK(r.pmd.stats().largest_burst == 4);
  // Back to back from 10us: each burst costs a poll and 100ns a frame.
  CHECK(r.last == 10_us + 20_ns * 3 + 100_ns * 10);
  const CpuTimes t = r.cpu.times(0);
  CHECK(at(t, CpuUse::user) == 20_ns * 3 + 100_ns * 10);
  // The loop's first empty burst, its context switch, and spinning the rest.
  CHECK(at(t, CpuUse::idle) == Time{});
  CHECK(at(t, CpuUse::syscall) == 1_us);
  CHECK(at(t, CpuUse::poll) == r.sim.now() - 1_us - (20_ns * 3 + 100_ns * 10));
  CHECK(at(t, CpuUse::irq) == Time{});
  CHECK(at(t, CpuUse::softirq) == Time{});
  // The other core is the programs'; the loop leaves it alone.
  CHECK(at(r.cpu.times(1), CpuUse::idle) == r.sim.now());
}

TEST_CASE("dpdk: frames arriving during a burst wait for the next; a full queue drops, unpolled") {
  Rig r(8);
  r.sim.at(10_us, [&r] { r.frames(2); });
  r.sim.at(10_us + 50_ns, [&r] { r.frames(12); });  // 8 fit the queue, 4 are dropped
  r.sim.run(50_us);
  CHECK(r.dropped == 4);
  CHECK(r.pmd.stats().ring_drops == 4);
  CHECK(r.delivered == 10);
  CHECK(r.pmd.stats().bursts == 3);  // 2, then 4 and 4 of the 8 that waited
}

TEST_CASE("dpdk: programs are never placed on a poll-mode core") {
  Rig r;
  for (int i = 0; i < 3; ++i) CHECK(r.cpu.spawn("app", Process::Kind::io).core() == 1);
}

#include "nodes/host/kernel/stream_socket.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "core/task.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

Time at(const CpuTimes& t, CpuUse u) { return t[static_cast<size_t>(u)]; }

// A protocol with a send buffer of `limit` bytes that the test empties by
// hand (ACKs), cutting what it takes into 1000-byte segments.
struct FakeTransport final : StreamTransport {
  size_t limit = 0, held = 0, consumed_bytes = 0;
  bool open = false;
  std::vector<std::byte> sent;
  size_t room() const override { return limit - held; }
  uint64_t segments(size_t n) const override { return (n + 999) / 1000; }
  size_t push(std::span<const std::byte> d) override {
    const size_t n = std::min(d.size(), room());
    sent.insert(sent.end(), d.begin(), d.begin() + static_cast<std::ptrdiff_t>(n));
    held += n;
    return n;
  }
  void connect() override { open = true; }
  void consumed(size_t n) override { consumed_bytes += n; }
};

SocketCosts costs() {
  SocketCosts k;
  k.use = CpuUse::syscall;
  k.call = 500_ns;
  k.tx_segment = 200_ns;
  k.copy = DataRate(8'000'000'000);  // 1 byte a ns
  return k;
}

struct Rig {
  Rig() : k(costs()), cpu(sim, 1, 1_us), socket(sim, k), p(cpu.spawn("app", Process::Kind::io, true)) {
    socket.attach(t);
  }
  SocketCosts k;
  Simulator sim;
  Cpu cpu;
  FakeTransport t;
  StreamSocket socket;
  Process& p;
};

Task sender(Rig& r, std::span<const std::byte> data, bool& ok, Time& done) {
  co_await r.socket.send(r.cpu, r.p, data, ok);
  done = r.sim.now();
}

Task receiver(Rig& r, std::span<std::byte> out, size_t& got, Time& done) {
  co_await r.socket.recv(r.cpu, r.p, out, got);
  done = r.sim.now();
}

}  // namespace

TEST_CASE("send: the system call, the copy and a transmit per segment, on the caller's core") {
  Rig r;
  r.t.limit = 1 << 20;
  r.socket.established();
  std::vector<std::byte> data(2500, std::byte{7});
  bool ok = false;
  Time done;
  sender(r, data, ok, done);
  r.sim.run();
  CHECK(ok);
  CHECK(r.t.sent == data);
  // 500ns + 2500 bytes at 1 byte/ns + 3 segments * 200ns; the first burst
  // pays the context switch of a process not yet loaded.
  CHECK(at(r.cpu.times(0), CpuUse::syscall) == 1_us + 500_ns + 2500_ns + 600_ns);
  CHECK(done == 1_us + 500_ns + 2500_ns + 600_ns);
  CHECK(r.socket.stats().segments_pushed == 3);
}

TEST_CASE("send blocks on a full send buffer until ACKs free room") {
  Rig r;
  r.t.limit = 1000;
  r.socket.established();
  std::vector<std::byte> data(2500);
  bool ok = false;
  Time done = Time::max();
  sender(r, data, ok, done);
  r.sim.run();
  CHECK(r.t.held == 1000);  // the first 1000 bytes went; the caller sleeps
  CHECK(done == Time::max());
  CHECK(r.socket.stats().send_waits == 1);
  for (int i = 0; i < 2; ++i) {
    r.sim.at(r.sim.now() + 10_us, [&r] {
      r.t.held = 0;  // everything acknowledged
      r.socket.write_space();
    });
    r.sim.run();
  }
  CHECK(ok);
  CHECK(r.t.sent.size() == 2500);
  CHECK(r.socket.stats().send_waits == 2);
  CHECK(done > 20_us);
}

TEST_CASE("recv sleeps on an empty queue, then copies what is there and opens the window") {
  Rig r;
  r.socket.established();
  std::vector<std::byte> out(100);
  size_t got = 0;
  Time done = Time::max();
  receiver(r, out, got, done);
  r.sim.run();
  CHECK(done == Time::max());
  std::vector<std::byte> in(150);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i);
  r.sim.at(5_us, [&] { r.socket.received(in); });
  r.sim.run();
  // Woken at 5us: a context switch, then the copy of 100 bytes (the buffer's size).
  CHECK(got == 100);
  CHECK(std::equal(out.begin(), out.end(), in.begin()));
  CHECK(r.t.consumed_bytes == 100);
  CHECK(r.socket.queued() == 50);
  CHECK(done == 5_us + 1_us + 100_ns);
  CHECK(r.socket.stats().recv_waits == 1);
  // The rest, through the ring's wrap.
  r.socket.received(in);
  receiver(r, out, got, done);
  r.sim.run();
  CHECK(got == 100);
  CHECK(std::equal(out.begin(), out.begin() + 50, in.begin() + 100));
  CHECK(std::equal(out.begin() + 50, out.end(), in.begin()));
}

TEST_CASE("connect opens the transport and waits; a closed connection fails the calls") {
  Rig r;
  bool ok = true;
  Task t = [](Rig& r, bool& ok) -> Task { co_await r.socket.connect(r.cpu, r.p, ok); }(r, ok);
  r.sim.run();
  CHECK(r.t.open);
  CHECK_FALSE(r.socket.is_established());
  r.socket.closed();
  r.sim.run();
  CHECK_FALSE(ok);
  std::vector<std::byte> out(10);
  size_t got = 1;
  Time done;
  receiver(r, out, got, done);
  r.sim.run();
  CHECK(got == 0);
}

TEST_CASE("the peer's FIN: a reader gets what was queued, then 0 (end of file), and sleeps no more") {
  Rig r;
  r.socket.established();
  std::vector<std::byte> out(10);
  size_t got = 1;
  Time done = Time::max();
  receiver(r, out, got, done);
  r.sim.run();
  CHECK(done == Time::max());  // asleep on the empty queue
  std::vector<std::byte> in(4, std::byte{9});
  r.sim.at(2_us, [&] {
    r.socket.received(in);
    r.socket.peer_closed();
  });
  r.sim.run();
  CHECK(got == 4);
  receiver(r, out, got, done);
  r.sim.run();
  CHECK(got == 0);
  CHECK(r.socket.is_peer_closed());
  CHECK_FALSE(r.socket.is_closed());  // still open for writing (CLOSE_WAIT)
}

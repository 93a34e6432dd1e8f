// A link between two ports: serialisation at the link rate plus the
// propagation delay, the egress queue limit, round robin between traffic
// classes, an egress gate holding a class back, and a link going down.
#include "nodes/port.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "tests/fixtures/probe_node.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using test::ProbeNode;

namespace {

struct Link {
  Simulator sim;
  PacketPool pool;
  ProbeNode a{sim, "a"}, b{sim, "b"};
  explicit Link(LinkParams p) { Port::connect(a.port(0), b.port(0), p, 1); }
  Port& tx() { return a.port(0); }
  Packet frame(size_t bytes, uint8_t priority = 0) {
    Packet p = pool.make();
    p.push_back(bytes);
    p.meta().priority = priority;
    return p;
  }
};

LinkParams ten_gig() {
  LinkParams p;
  p.rate = DataRate(10'000'000'000);
  p.delay = Time::us(1);
  p.wire_overhead = 24;
  return p;
}

// Gate that holds class 3 back until opened.
struct HoldClass3 : EgressGate {
  bool open = false;
  std::vector<uint8_t> sent_classes;
  bool may_send(uint8_t cls, size_t) const override { return cls != 3 || open; }
  void sent(uint8_t cls, size_t) override { sent_classes.push_back(cls); }
};

}  // namespace

TEST_CASE("port: a frame arrives after its serialisation (with the wire overhead) and the delay") {
  Link l(ten_gig());
  REQUIRE(l.tx().send(l.frame(1000)));
  REQUIRE(l.tx().send(l.frame(1000)));
  l.sim.run();
  REQUIRE(l.b.got.size() == 2);
  const Time frame_time = Time::ps(1024 * 8 * 100);  // 1024 bytes at 10 Gb/s: 819.2 ns
  CHECK(l.tx().tx_time(1000) == frame_time);
  CHECK(l.b.got[0].at == frame_time + 1_us);
  CHECK(l.b.got[1].at == frame_time * 2 + 1_us);  // back to back
  CHECK(l.tx().stats().tx_frames == 2);
  CHECK(l.tx().stats().tx_bytes == 2000);
  CHECK(l.b.port(0).stats().rx_frames == 2);
}

TEST_CASE("port: a frame under the link's minimum leaves padded with zeros, counted and timed so") {
  LinkParams p = ten_gig();
  p.min_frame = 60;  // Ethernet's
  Link l(p);
  Packet short_frame = l.frame(54);  // a TCP ACK: 14 + 20 + 20
  std::memset(short_frame.raw_bytes().data(), 0xAB, 54);
  std::vector<size_t> seen;  // what a capture sees
  l.tx().on_tx([&](Time, Packet& f) { seen.push_back(f.size()); });
  REQUIRE(l.tx().send(std::move(short_frame)));
  REQUIRE(l.tx().send(l.frame(1000)));
  Packet pause = l.frame(40);
  std::memset(pause.raw_bytes().data(), 0xCD, 40);
  l.tx().send_control(std::move(pause));
  l.sim.run();
  // The control frame goes ahead of the queued 1000 bytes, padded too.
  CHECK(seen == std::vector<size_t>{60, 60, 1000});
  REQUIRE(l.b.got.size() == 3);
  const auto& ack = l.b.got[0].bytes;
  REQUIRE(ack.size() == 60);
  CHECK(ack[53] == std::byte{0xAB});
  for (size_t i = 54; i < 60; ++i) CHECK(ack[i] == std::byte{0});
  REQUIRE(l.b.got[1].bytes.size() == 60);
  CHECK(l.b.got[1].bytes[39] == std::byte{0xCD});
  CHECK(l.b.got[1].bytes[40] == std::byte{0});
  CHECK(l.b.got[2].bytes.size() == 1000);
  CHECK(l.tx().stats().tx_bytes == 60 + 1000 + 60);
  CHECK(l.b.port(0).stats().rx_bytes == 60 + 1000 + 60);
  // On the wire 60 bytes and the overhead (84 bytes, 67.2 ns at 10 Gb/s), whatever size is asked about.
  CHECK(l.tx().wire_bytes(54) == 84);
  CHECK(l.tx().wire_bytes(1000) == 1024);
  CHECK(l.tx().tx_time(54) == Time::ps(67'200));
  CHECK(l.b.got[0].at == Time::ps(67'200) + 1_us);
}

TEST_CASE("port: a link without a minimum frame sends a short frame as it is") {
  Link l(ten_gig());
  REQUIRE(l.tx().send(l.frame(20)));
  l.sim.run();
  REQUIRE(l.b.got.size() == 1);
  CHECK(l.b.got[0].bytes.size() == 20);
  CHECK(l.tx().wire_bytes(20) == 44);
}

TEST_CASE("port: the egress queue drops what does not fit in its buffer") {
  LinkParams p = ten_gig();
  p.buffer_bytes = 2500;
  Link l(p);
  CHECK(l.tx().send(l.frame(1000)));  // on the wire at once
  CHECK(l.tx().send(l.frame(1000)));
  CHECK(l.tx().send(l.frame(1000)));
  CHECK(l.tx().queued_bytes() == 2000);
  CHECK_FALSE(l.tx().send(l.frame(1000)));
  CHECK(l.tx().stats().drops == 1);
  l.sim.run();
  CHECK(l.b.got.size() == 3);
}

TEST_CASE("port: classes with frames queued take turns") {
  Link l(ten_gig());
  REQUIRE(l.tx().send(l.frame(100, 1)));  // starts at once
  for (uint8_t c : {1, 1, 2, 2}) REQUIRE(l.tx().send(l.frame(100, c)));
  CHECK(l.tx().queued_bytes(1) == 200);
  l.sim.run();
  std::vector<uint8_t> order;
  for (const auto& g : l.b.got) order.push_back(g.priority);
  CHECK(order == std::vector<uint8_t>{1, 2, 1, 2, 1});
}

TEST_CASE("port: a gate holds a class back; the time waited is credit_wait") {
  Link l(ten_gig());
  HoldClass3 gate;
  l.tx().set_gate(&gate);
  REQUIRE(l.tx().send(l.frame(100, 3)));
  l.sim.at(10_us, [&] {
    gate.open = true;
    l.tx().kick();
  });
  l.sim.run();
  REQUIRE(l.b.got.size() == 1);
  CHECK(l.b.got[0].at == 10_us + l.tx().tx_time(100) + 1_us);
  CHECK(l.tx().stats().credit_wait == 10_us);
  CHECK(gate.sent_classes == std::vector<uint8_t>{3});
}

TEST_CASE("port: frames on the wire when the link goes down are lost") {
  Link l(ten_gig());
  REQUIRE(l.tx().send(l.frame(1000)));
  l.sim.at(500_ns, [&] { Port::set_link_up(l.tx(), false); });
  l.sim.run();
  CHECK(l.b.got.empty());
  CHECK(l.tx().stats().drops == 1);
  CHECK_FALSE(l.b.port(0).up());
  Port::set_link_up(l.tx(), true);
  REQUIRE(l.tx().send(l.frame(1000)));
  l.sim.run();
  CHECK(l.b.got.size() == 1);
}

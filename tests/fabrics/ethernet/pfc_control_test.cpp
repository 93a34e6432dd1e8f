// PFC as the port machinery does it (fabrics/ethernet/pfc.hpp); the frame
// format itself is tested in wire/pfc_test.cpp.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>

#include "fabrics/ethernet/l2_bridge.hpp"
#include "fabrics/ethernet/pfc.hpp"
#include "tests/fixtures/probe_node.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using rdmasim::test::eth_frame;
using rdmasim::test::ProbeNode;

namespace {

const MacAddress kA = MacAddress::local(0xA), kB = MacAddress::local(0xB);

PfcSettings small(uint16_t quanta = 0xFFFF) {
  PfcSettings s;
  s.classes = 1 << 3;
  s.xoff = 1000;
  s.xon = 500;
  s.pause_quanta = quanta;
  return s;
}

// a -- b, PFC on both ports, b's held bytes driven by hand.
struct Pair {
  Simulator sim;
  PacketPool pool;
  ProbeNode a{sim, "a"}, b{sim, "b"};
  PfcNode* pa;
  PfcNode* pb;
  explicit Pair(PfcSettings s = small()) {
    Port::connect(a.port(0), b.port(0), LinkParams{}, 1);
    pa = &PfcNode::attach(a, pool, s, PfcAccounting::until_released, [](uint16_t) { return kA; });
    pb = &PfcNode::attach(b, pool, s, PfcAccounting::until_released, [](uint16_t) { return kB; });
  }
  PfcPort& at_a() { return pa->port(0); }
  PfcPort& at_b() { return pb->port(0); }
};

}  // namespace

TEST_CASE("pfc: XOFF at the threshold pauses the peer's priority; XON resumes it") {
  Pair t;
  t.at_b().add(3, 999);
  t.sim.run();
  CHECK(t.a.got.empty());
  t.at_b().add(3, 1);  // 1000 = XOFF
  CHECK(t.at_b().pausing_peer(3));
  t.sim.run(t.sim.now() + 2_us);
  REQUIRE(t.a.got.size() == 1);  // the PFC frame, which a's node also sees
  const auto& f = t.a.got[0].bytes;
  CHECK(f.size() == kPfcFrameLen);
  CHECK(rdmasim::test::dst_of(f) == kPfcDestination);
  CHECK(rdmasim::test::src_of(f) == kB);
  const PfcFrame pf = PfcFrame::parse(*ConstPfcView::check(ConstEthernetView::check(f)->payload()));
  CHECK(pf.class_enable == 0x08);
  CHECK(pf.quanta[3] == 0xFFFF);
  CHECK(t.at_a().paused(3));
  CHECK_FALSE(t.at_a().paused(0));
  CHECK(t.a.port(0).stats().pause_frames == 1);
  CHECK(t.b.port(0).stats().pause_frames == 1);

  // Priority 3 waits; priority 0 goes.
  t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 3));
  t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 0));
  t.sim.run(t.sim.now() + 5_us);
  REQUIRE(t.b.got.size() == 1);
  CHECK(t.b.got[0].priority == 0);
  CHECK(t.a.port(0).queued_bytes(3) == 100);

  // Down to XON: a resume (time 0) goes out and the frame follows.
  t.at_b().remove(3, 499);
  t.sim.run(t.sim.now() + 5_us);
  CHECK(t.b.got.size() == 1);
  t.at_b().remove(3, 1);
  CHECK_FALSE(t.at_b().pausing_peer(3));
  t.sim.run(t.sim.now() + 5_us);
  REQUIRE(t.a.got.size() == 2);
  const PfcFrame xon =
      PfcFrame::parse(*ConstPfcView::check(ConstEthernetView::check(t.a.got[1].bytes)->payload()));
  CHECK(xon.class_enable == 0x08);
  CHECK(xon.quanta[3] == 0);
  CHECK_FALSE(t.at_a().paused(3));
  REQUIRE(t.b.got.size() == 2);
  CHECK(t.b.got[1].priority == 3);
  CHECK(t.at_b().stats().xoff_sent == 1);
  CHECK(t.at_b().stats().xon_sent == 1);
  CHECK(t.at_a().stats().received == 2);
  CHECK(t.a.port(0).stats().credit_wait > Time{});
}

TEST_CASE("pfc: a port makes its pause timers at its first PFC frame, sent or received, not before") {
  Pair t;
  t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 3));
  t.sim.run(t.sim.now() + 5_us);
  CHECK(t.b.got.size() == 1);
  REQUIRE(t.at_b().held(3) < 1000);  // traffic, held bytes below XOFF: no PFC frame
  CHECK_FALSE(t.at_a().has_timers());
  CHECK_FALSE(t.at_b().has_timers());
  t.at_b().add(3, 1000);  // XOFF: b sends, a receives
  CHECK(t.at_b().has_timers());
  t.sim.run(t.sim.now() + 2_us);
  CHECK(t.at_a().has_timers());
  CHECK(t.at_a().paused(3));
  t.at_b().remove(3, t.at_b().held(3));  // and they work as before: the resume ends the pause
  t.sim.run(t.sim.now() + 2_us);
  CHECK_FALSE(t.at_a().paused(3));
  CHECK(t.at_b().stats().xon_sent == 1);
}

TEST_CASE("pfc: a pause lasts its quanta of 512 bit times, and is renewed while congested") {
  const Time pause = pfc_quanta_to_time(1000, 100_Gbps);  // 512 bits each at 100 Gb/s
  CHECK(pause == 5120_ns);
  {
    Pair t(small(1000));
    t.at_b().add(3, 2000);
    t.sim.run(10_us);
    // XOFF at 0, renewed every half pause: 2.56, 5.12 and 7.68 us.
    CHECK(t.at_b().stats().xoff_sent == 4);
    CHECK(t.at_a().paused(3));
    t.at_b().remove(3, 2000);
    t.sim.run(20_us);
    CHECK(t.at_b().stats().xoff_sent == 4);
    CHECK(t.at_b().stats().xon_sent == 1);
    CHECK_FALSE(t.at_a().paused(3));
  }
  {
    // One PFC frame and no renewal: the pause ends on its own.
    Pair t(small(1000));
    PfcFrame f;
    f.class_enable = 1 << 3;
    f.quanta[3] = 1000;
    t.at_a().on_pfc(f);
    t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 3));
    t.sim.run();
    REQUIRE(t.b.got.size() == 1);
    CHECK(t.b.got[0].at == pause + LinkParams{}.rate.tx_time(100) + 1_us);
  }
}

TEST_CASE("pfc: only lossless priorities are counted and honoured") {
  Pair t;
  t.at_b().add(0, 5000);  // priority 0 is not lossless here
  t.sim.run();
  CHECK(t.a.got.empty());
  CHECK(t.at_b().held(0) == 0);
  PfcFrame f;
  f.class_enable = 0x01;
  f.quanta[0] = 0xFFFF;
  t.at_a().on_pfc(f);
  CHECK_FALSE(t.at_a().paused(0));
}

TEST_CASE("pfc: headroom and lossless thresholds") {
  LinkParams link;  // 100 Gb/s, 1 us, 24 bytes of wire overhead below
  link.wire_overhead = 24;
  const uint32_t frame = 4096 + 128;
  // 2 us of 100 Gb/s = 25000 bytes, two frames, one PFC frame.
  CHECK(pfc_headroom(link, frame) == 25000 + 2 * (frame + 24) + 60 + 24);

  Simulator sim;
  PacketPool pool;
  L2Bridge sw(sim, "sw", 0x100, {});
  std::vector<std::unique_ptr<ProbeNode>> hosts;
  for (int i = 0; i < 9; ++i) {
    hosts.push_back(std::make_unique<ProbeNode>(sim, "h" + std::to_string(i)));
    Port::connect(hosts.back()->port(0), sw.add_port(), link, 1);
  }
  PfcSettings s;  // 256 KiB / 128 KiB
  const PfcSettings l = lossless_thresholds(s, sw, frame);
  const uint64_t want = (1u << 20) / 8 - pfc_headroom(link, frame) - frame;
  CHECK(l.xoff == want);
  CHECK(l.xon == want / 2);
  // Eight ingress ports just past XOFF plus their headroom fit one egress buffer.
  CHECK(8 * (l.xoff + frame + pfc_headroom(link, frame)) <= (1u << 20));
  // A configured XOFF below that stays.
  s.xoff = 20000;
  s.xon = 10000;
  CHECK(lossless_thresholds(s, sw, frame).xoff == 20000);
  CHECK(lossless_thresholds(s, sw, frame).xon == 10000);
}

// Two senders at 100 Gb/s into one 25 Gb/s port of a bridge with small
// buffers: without PFC the egress queue overflows, with it nothing is lost.
TEST_CASE("pfc: a bridge's ingress accounting keeps a 2-to-1 incast lossless") {
  for (bool pfc : {false, true}) {
    CAPTURE(pfc);
    Simulator sim;
    PacketPool pool;
    L2Bridge sw(sim, "sw", 0x100, {});
    ProbeNode s0(sim, "s0"), s1(sim, "s1"), r(sim, "r");
    LinkParams fast, slow;
    fast.buffer_bytes = slow.buffer_bytes = 64 << 10;
    fast.wire_overhead = slow.wire_overhead = 24;
    slow.rate = 25_Gbps;
    Port::connect(s0.port(0), sw.add_port(), fast, 1);
    Port::connect(s1.port(0), sw.add_port(), fast, 2);
    Port::connect(r.port(0), sw.add_port(), slow, 3);
    const MacAddress kR = MacAddress::local(0xEE);
    PfcSettings s;
    const uint32_t frame = 1500;
    if (pfc) {
      PfcNode::attach(s0, pool, s, PfcAccounting::until_released, [](uint16_t) { return kA; });
      PfcNode::attach(s1, pool, s, PfcAccounting::until_released, [](uint16_t) { return kB; });
      PfcNode::attach(r, pool, s, PfcAccounting::until_released, [&](uint16_t) { return kR; });
      auto& n = PfcNode::attach(sw, pool, lossless_thresholds(s, sw, frame), PfcAccounting::until_departed,
                                [&](uint16_t p) { return sw.port_mac(p); });
      sw.on_discard([&n](const Packet& p) { n.discarded(p); });
    }
    // Teach the bridge where r is, then 300 frames from each sender, fed as
    // their ports drain (a NIC keeps a couple queued).
    r.port(0).send(eth_frame(pool, MacAddress::broadcast(), kR));
    sim.run();
    int left[2] = {300, 300};
    ProbeNode* senders[2] = {&s0, &s1};
    for (int i = 0; i < 2; ++i) {
      Port* port = &senders[i]->port(0);
      auto feed = [&left, &pool, i, port, kR, frame] {
        while (left[i] > 0 && port->queued_frames() < 2) {
          port->send(eth_frame(pool, kR, i ? kB : kA, frame, 3, 0));
          --left[i];
        }
      };
      port->on_tx_ready(feed);
      feed();
    }
    sim.run();
    const uint64_t data =
        std::count_if(r.got.begin(), r.got.end(), [](const auto& g) { return g.bytes.size() == 1500; });
    const uint64_t drops = sw.port(2).stats().drops;
    if (pfc) {
      CHECK(drops == 0);
      CHECK(data == 600);
      CHECK(sw.port(0).stats().pause_frames > 0);
      CHECK(s0.port(0).stats().pause_frames == sw.port(0).stats().pause_frames);
      CHECK(s0.port(0).stats().credit_wait > Time{});
    } else {
      CHECK(drops > 0);
      CHECK(data + drops == 600);
    }
  }
}

TEST_CASE("pfc: the watchdog drains a queue paused with frames waiting, ignores PFC on it, then restores") {
  PfcSettings s = small();
  s.watchdog = 100_us;
  s.watchdog_restore = 200_us;  // longer than b's renewals (every 168 us): the storm keeps it on
  Pair t(s);
  size_t events = 0, dropped_seen = 0;
  t.at_a().on_watchdog([&](uint8_t cls, size_t dropped) {
    CHECK(cls == 3);
    ++events;
    dropped_seen += dropped;
  });
  uint64_t drop_signals = 0;
  t.a.port(0).on_drop([&](Time, Packet&) { ++drop_signals; });
  t.at_b().add(3, 2000);  // b pauses a's priority 3 and keeps renewing it: a storm
  t.sim.run(2_us);
  REQUIRE(t.at_a().paused(3));
  for (int i = 0; i < 3; ++i) t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 3));
  t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 0));  // another priority goes by
  t.sim.run(99_us);
  CHECK(events == 0);
  CHECK(t.a.port(0).queued_bytes(3) == 300);
  t.sim.run(103_us);
  // Paused (from about 1 us) 100 us with frames waiting: the three frames dropped, whole, as drops.
  CHECK(events == 1);
  CHECK(dropped_seen == 3);
  CHECK(drop_signals == 3);
  CHECK(t.a.port(0).stats().drops == 3);
  CHECK(t.a.port(0).queued_bytes(3) == 0);
  CHECK(t.at_a().stats().watchdog_events == 1);
  CHECK(t.at_a().watchdog_active(3));
  REQUIRE(t.b.got.size() == 1);  // only the priority-0 frame arrived
  CHECK(t.b.got[0].priority == 0);
  // While b keeps pausing, a ignores it: a new frame goes at once.
  t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 3));
  t.sim.run(110_us);
  CHECK_FALSE(t.at_a().paused(3));
  REQUIRE(t.b.got.size() == 2);
  CHECK(t.b.got[1].priority == 3);
  t.sim.run(300_us);
  CHECK(t.at_a().watchdog_active(3));  // the storm goes on: still ignored
  // b resumes; no pause for the restore time: a honours PFC again.
  t.at_b().remove(3, 2000);
  t.sim.run(t.sim.now() + 300_us);
  CHECK_FALSE(t.at_a().watchdog_active(3));
  t.at_b().add(3, 2000);
  t.sim.run(t.sim.now() + 2_us);
  CHECK(t.at_a().paused(3));
  CHECK(events == 1);
}

TEST_CASE("pfc: without frames waiting a long pause is no storm; a resume stops the watch") {
  PfcSettings s = small();
  s.watchdog = 100_us;
  s.watchdog_restore = 100_us;
  Pair t(s);
  t.at_b().add(3, 2000);
  t.sim.run(250_us);
  CHECK(t.at_a().paused(3));
  CHECK(t.at_a().stats().watchdog_events == 0);
  t.at_b().remove(3, 2000);
  t.sim.run(t.sim.now() + 2_us);
  t.a.port(0).send(eth_frame(t.pool, kB, kA, 100, 3));
  t.sim.run(t.sim.now() + 500_us);
  CHECK(t.at_a().stats().watchdog_events == 0);
  CHECK(t.b.got.size() == 1);
}

TEST_CASE("pfc: a node whose port's MAC cannot be had gets no PFC, and what was built is freed") {
  // The PfcPorts are built in place one by one: the ones built before the
  // failure are destroyed and their memory given back (the sanitizer
  // build's leak check sees it).
  Simulator sim;
  PacketPool pool;
  ProbeNode n{sim, "n"};
  n.add_port();
  auto no_mac_for_port_1 = [](uint16_t port) {
    if (port == 1) throw std::runtime_error("no MAC for port 1");
    return kA;
  };
  CHECK_THROWS_AS(PfcNode::attach(n, pool, small(), PfcAccounting::until_released, no_mac_for_port_1),
                  std::runtime_error);
  CHECK(n.port(0).gate() == nullptr);
  CHECK(n.port(1).gate() == nullptr);
}

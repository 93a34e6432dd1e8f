// fabrics/ib/ib_switch: forwarding on DLID, VL changes, latency,
// lossless back-pressure and VL independence.
#include "fabrics/ib/ib_switch.hpp"

#include <doctest/doctest.h>

#include <memory>

#include "fabrics/ib/credit_flow_control.hpp"
#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/wire/bth.hpp"
#include "tests/fabrics/ib/ib_test_util.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using test::Endpoint;

namespace {

// Three end nodes (LIDs 1, 2, 3) on one switch, 100 Gb/s links with 1 us of
// delay, 2 data VLs; `buffer` is each port's receive buffer. The ends' egress
// queues take anything a test queues at once.
struct Star {
  Simulator sim;
  PacketPool pool;
  std::vector<std::unique_ptr<Endpoint>> ends;
  IbSwitch sw;
  std::vector<CreditLink> links;

  explicit Star(SwitchConfig cfg = {}, uint64_t buffer = 32 << 10, bool ends_free_at_once = true)
      : sw(sim, "sw", cfg) {
    for (int i = 0; i < 3; ++i) {
      ends.push_back(std::make_unique<Endpoint>(sim, "e" + std::to_string(i), ends_free_at_once));
      Port& sp = sw.add_port();
      LinkParams lp;
      lp.rate = 100_Gbps;
      lp.delay = 1_us;
      lp.buffer_bytes = 16 << 20;
      lp.wire_overhead = 4;
      Port::connect(ends[i]->port(0), sp, lp, i + 1);
    }
    sw.attach_ports();
    for (int i = 0; i < 3; ++i) {
      links.push_back(install_credit_flow_control(sim, ends[i]->port(0), sw.port(i), buffer, 2,
                                                  ends_free_at_once, false));
      sw.set_forwarding(static_cast<uint16_t>(i + 1), static_cast<uint16_t>(i));
      sw.set_sl_to_vl(static_cast<uint16_t>(i), SlToVl::modulo(2));
    }
  }
  Endpoint& e(int i) { return *ends[i]; }
  void send(int from, uint16_t dlid, uint8_t sl, size_t payload, uint32_t psn = 0, bool sealed = false) {
    Packet p = test::ib_frame(pool, dlid, static_cast<uint16_t>(from + 1), sl, sl % 2, payload, psn);
    if (sealed) {
      fill_ib_crcs(p.bytes());
      p.meta().crc_pending = false;
    }
    e(from).port(0).send(std::move(p));
  }
  uint64_t drops() const {
    uint64_t d = 0;
    for (const auto& x : ends) d += x->port(0).stats().drops;
    for (size_t i = 0; i < sw.port_count(); ++i) d += sw.port(i).stats().drops;
    return d;
  }
};

uint32_t psn_of(const Packet& p) { return ConstBthView::check(p.bytes().subspan(8))->psn(); }

}  // namespace

TEST_CASE("ib switch: an output's queues hold no memory until a packet passes through it") {
  Star s;
  CHECK(s.sw.queue_bytes() == 0);
  s.send(0, 3, 0, 100);
  s.sim.run();
  REQUIRE(s.e(2).got.size() == 1);
  // Only the output the packet took, sized for it; the other two hold nothing.
  const size_t used = s.sw.queue_bytes();
  CHECK(used > 0);
  CHECK(used < 4096);
  s.send(1, 3, 0, 100);
  s.sim.run();
  CHECK(s.e(2).got.size() == 2);
  CHECK(s.sw.queue_bytes() == used);  // the same output again: nothing more
}

TEST_CASE("ib switch: forwards on the DLID through its table, bytes unchanged") {
  Star s;
  Packet probe = test::ib_frame(s.pool, 3, 1, 0, 0, 100, 7);
  const std::vector<std::byte> sent(probe.bytes().begin(), probe.bytes().end());
  s.e(0).port(0).send(std::move(probe));
  s.send(2, 2, 0, 50);
  s.sim.run();
  REQUIRE(s.e(2).got.size() == 1);
  CHECK(std::vector<std::byte>(s.e(2).got[0].bytes().begin(), s.e(2).got[0].bytes().end()) == sent);
  CHECK(s.e(2).got[0].meta().crc_pending);  // nobody observed it: CRCs still owed
  CHECK(s.e(1).got.size() == 1);
  CHECK(s.e(0).got.empty());
  CHECK(s.sw.stats().forwarded == 2);
  CHECK(s.sw.forwarding(3) == 2);
  CHECK_FALSE(s.sw.forwarding(4));
}

TEST_CASE("ib switch: a DLID without an entry is discarded and its buffer freed") {
  Star s;
  s.send(0, 9, 0, 100);
  s.send(0, 1, 0, 100);  // back out of the port it came in on: discarded too
  s.sim.run();
  CHECK(s.sw.stats().no_route == 2);
  CHECK(s.e(1).got.empty());
  CHECK(s.e(2).got.empty());
  CHECK(s.links[0].a_to_b->credits(0) == s.links[0].a_to_b->limit_blocks());
  CHECK(s.links[0].a_to_b->occupied_blocks(0) == 0);
}

TEST_CASE("ib switch: malformed packets are discarded") {
  Star s;
  Packet p = test::ib_frame(s.pool, 2, 1, 0, 0, 100);
  p.push_back(4);  // PktLen no longer matches
  s.e(0).port(0).send(std::move(p));
  s.sim.run();
  CHECK(s.sw.stats().malformed == 1);
  CHECK(s.e(1).got.empty());
}

TEST_CASE("ib switch: a new VL on the way out gets a new VCRC and keeps its ICRC") {
  Star s;
  SlToVl t = SlToVl::modulo(2);
  t.set(0, 1);  // SL 0 leaves port 1 on VL 1
  s.sw.set_sl_to_vl(1, t);
  s.send(0, 2, 0, 200, 1, true);   // sealed (a capture saw it): the switch redoes the VCRC
  s.send(0, 2, 0, 200, 2, false);  // not yet sealed: the CRCs stay owed
  s.send(0, 3, 0, 200, 3, true);   // port 2 keeps SL 0 on VL 0
  s.sim.run();
  REQUIRE(s.e(1).got.size() == 2);
  Packet& a = s.e(1).got[0];
  CHECK(ConstLrhView::check(std::as_const(a).bytes())->vl() == 1);
  CHECK(a.meta().vl == 1);
  CHECK_FALSE(a.meta().crc_pending);
  CHECK(test::ib_crcs_ok(a.bytes()));
  Packet& b = s.e(1).got[1];
  CHECK(b.meta().crc_pending);
  fill_ib_crcs(b.bytes());
  CHECK(test::ib_crcs_ok(b.bytes()));
  // Two packets identical but for the PSN: ICRCs differ, but both VL 1.
  CHECK(ConstLrhView::check(std::as_const(b).bytes())->vl() == 1);
  CHECK(s.sw.stats().vl_changes == 2);
  REQUIRE(s.e(2).got.size() == 1);
  CHECK(test::ib_crcs_ok(s.e(2).got[0].bytes()));
  CHECK(ConstLrhView::check(std::as_const(s.e(2).got[0]).bytes())->vl() == 0);
}

TEST_CASE("ib switch: cut-through and store-and-forward latency") {
  const size_t payload = 1022 - 26;  // a 1022-byte frame
  const Time ser = (100_Gbps).tx_time(1022 + 4);
  SUBCASE("cut-through: the first bit leaves 300 ns after it came in") {
    Star s(SwitchConfig{300_ns, SwitchMode::cut_through});
    s.send(0, 2, 0, payload);
    s.sim.run();
    REQUIRE(s.e(1).arrivals.size() == 1);
    CHECK(s.e(1).arrivals[0].count() == (300_ns + ser + 2_us).count());
  }
  SUBCASE("store-and-forward: 300 ns after the last bit") {
    Star s(SwitchConfig{300_ns, SwitchMode::store_and_forward});
    s.send(0, 2, 0, payload);
    s.sim.run();
    REQUIRE(s.e(1).arrivals.size() == 1);
    CHECK(s.e(1).arrivals[0].count() == (ser + 300_ns + ser + 2_us).count());
  }
}

TEST_CASE("ib switch: two senders into one link lose nothing and keep their order") {
  // 64 KiB a VL: more than a credit round trip (2 us + a packet) at 100 Gb/s,
  // so the bottleneck runs at line rate.
  Star s(SwitchConfig{}, 128 << 10);
  for (uint32_t i = 0; i < 300; ++i) {
    s.send(0, 2, 0, 2000, i);
    s.send(2, 2, 0, 2000, 1000 + i);
  }
  s.sim.run();
  CHECK(s.drops() == 0);
  REQUIRE(s.e(1).got.size() == 600);
  uint32_t next0 = 0, next2 = 1000;
  for (const Packet& p : s.e(1).got) {
    const uint32_t psn = psn_of(p);
    if (psn < 1000)
      CHECK(psn == next0++);
    else
      CHECK(psn == next2++);
  }
  // The link to e1 is the bottleneck: the senders wait for the switch's
  // input buffers, which never overflow.
  CHECK(s.e(0).port(0).stats().credit_wait > Time{});
  CHECK(s.e(2).port(0).stats().credit_wait > Time{});
  for (const auto& l : s.links) CHECK(l.a_to_b->stats().overruns == 0);
  CHECK(s.links[0].a_to_b->stats().peak_blocks <= s.links[0].a_to_b->limit_blocks());
  CHECK(s.sw.waiting() == 0);
  // The bottleneck never idles: the last frame arrives after 600 frame times
  // and a path's latency.
  const Time a = s.e(1).arrivals.back();
  CHECK(a < (100_Gbps).tx_time(600 * (2026 + 4)) + 3_us);
}

TEST_CASE("ib switch: a slow receiver makes the switch wait for credits") {
  Star s(SwitchConfig{}, 16 << 10, false);  // the ends hold what they receive
  for (uint32_t i = 0; i < 30; ++i) s.send(0, 2, 0, 2000, i);
  s.sim.run(100_us);
  // e1's VL 0 buffer holds 4 frames; the switch's input from e0 4 more.
  CHECK(s.e(1).got.size() == 4);
  CHECK(s.sw.port(1).stats().credit_wait == Time{});  // still waiting: counted when it ends
  // From then on e1 frees its buffer every 10 us: 4 frames a round.
  for (int k = 1; k <= 10; ++k) s.sim.at(100_us + 10_us * k, [&s] { s.e(1).free_all(); });
  s.sim.run();
  CHECK(s.e(1).got.size() == 30);
  // The switch's port to e1 waits from ~4 us (4 frames sent) to 171 us (the
  // credits of the 7th round), but not while it sends 4 frames a round, nor
  // while it has nothing queued because e0 refills the switch's input buffer
  // (a credit round trip, ~2 us, each round).
  const Time waited = s.sw.port(1).stats().credit_wait;
  const Time sending = (100_Gbps).tx_time(4 * (2026 + 4)) * 6;
  CHECK(waited < 171_us - 4_us - sending);
  CHECK(waited > 171_us - 4_us - sending - (2_us + (100_Gbps).tx_time(2 * 2030)) * 6);
  CHECK(s.drops() == 0);
}

TEST_CASE("ib switch: a VL out of credits does not block the other VL") {
  Star s(SwitchConfig{}, 16 << 10, false);
  for (uint32_t i = 0; i < 20; ++i) s.send(0, 2, 0, 2000, i);        // SL 0 -> VL 0
  for (uint32_t i = 0; i < 20; ++i) s.send(2, 2, 1, 2000, 100 + i);  // SL 1 -> VL 1
  // e1 never frees VL 0 but frees VL 1 as it goes.
  for (int k = 1; k <= 40; ++k) s.sim.at(2_us * k, [&s] { s.e(1).free_vl(1); });
  s.sim.run();
  int vl0 = 0, vl1 = 0;
  for (const Packet& p : s.e(1).got) (p.meta().vl == 0 ? vl0 : vl1)++;
  CHECK(vl0 == 4);   // e1's VL 0 buffer: 8 KiB
  CHECK(vl1 == 20);  // all of VL 1 went past the stuck VL 0
  CHECK(s.drops() == 0);
}

TEST_CASE("ib switch: the output arbitrates between VLs that both have credits") {
  Star s;
  for (uint32_t i = 0; i < 50; ++i) {
    s.send(0, 2, 0, 2000, i);
    s.send(2, 2, 1, 2000, 100 + i);
  }
  s.sim.run();
  REQUIRE(s.e(1).got.size() == 100);
  // Round robin: neither VL gets more than one packet ahead of the other.
  int lead = 0, worst = 0;
  for (const Packet& p : s.e(1).got) {
    lead += p.meta().vl == 0 ? 1 : -1;
    worst = std::max(worst, std::abs(lead));
  }
  CHECK(worst <= 2);
}

TEST_CASE("ib switch: IB CCA marks FECN at the root of congestion, never at a victim port") {
  const auto fecn_marked = [](const std::vector<Packet>& got) {
    int n = 0;
    for (const Packet& p : got) n += ConstBthView::check(p.bytes().subspan(8))->fecn() ? 1 : 0;
    return n;
  };
  {
    // A victim: the port to e1 queues because e1 returns no credits (the
    // congestion is past it). The old rule marked by queue depth alone.
    Star s(SwitchConfig{}, 16 << 10, false);
    s.sw.mark_fecn_above(4096);
    for (uint32_t i = 0; i < 30; ++i) s.send(0, 2, 0, 2000, i);
    for (int k = 1; k <= 10; ++k) s.sim.at(100_us + 10_us * k, [&s] { s.e(1).free_all(); });
    s.sim.run();
    REQUIRE(s.e(1).got.size() == 30);
    CHECK(s.sw.stats().fecn_marked == 0);
    CHECK(fecn_marked(s.e(1).got) == 0);
  }
  {
    // The root: two senders at line rate into one link with credits to spare.
    Star s(SwitchConfig{}, 512 << 10, true);
    s.sw.mark_fecn_above(4096);
    for (uint32_t i = 0; i < 30; ++i) {
      s.send(0, 2, 0, 2000, i);
      s.send(2, 2, 0, 2000, 100 + i);
    }
    s.sim.run();
    REQUIRE(s.e(1).got.size() == 60);
    CHECK(s.sw.stats().fecn_marked > 0);
    CHECK(fecn_marked(s.e(1).got) == static_cast<int>(s.sw.stats().fecn_marked));
  }
}

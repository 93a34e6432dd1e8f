// fabrics/ib/credit_flow_control: IBA 7.9 credits, one link.
#include "fabrics/ib/credit_flow_control.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/ib/ib_test_util.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using test::Endpoint;

namespace {

// A sender and a receiver on one 100 Gb/s link with 1 us of delay; the
// receiver has 8 KiB of buffer for each of 2 VLs (128 credits of 64 bytes).
struct Link {
  Simulator sim;
  PacketPool pool;
  Endpoint tx{sim, "tx", true};
  Endpoint rx;
  CreditLink credits;
  explicit Link(bool rx_frees_at_once = false, uint64_t buffer = 16 << 10) : rx(sim, "rx", rx_frees_at_once) {
    LinkParams lp;
    lp.rate = 100_Gbps;
    lp.delay = 1_us;
    lp.buffer_bytes = 1 << 20;  // the egress queue; credits are what limits
    Port::connect(tx.port(0), rx.port(0), lp, 1);
    credits = install_credit_flow_control(sim, tx.port(0), rx.port(0), buffer, 2, true, rx_frees_at_once);
  }
  // A frame of exactly `bytes` (4k + 2, as every IB packet) on `vl`.
  void send(uint8_t vl, size_t bytes) {
    Packet p = test::ib_frame(pool, 2, 1, vl, vl, bytes - 8 - 12 - 6);
    REQUIRE(p.size() == bytes);
    tx.port(0).send(std::move(p));
  }
};

}  // namespace

TEST_CASE("credits: a sender stops when the receiver's VL buffer is full, nothing is dropped") {
  Link l;
  CreditChannel& ch = *l.credits.a_to_b;
  CHECK(ch.limit_blocks() == 128);
  CHECK(ch.credits(0) == 128);
  for (int i = 0; i < 12; ++i) l.send(0, 1022);  // 16 blocks each: 8 fit
  l.sim.run();
  CHECK(l.rx.got.size() == 8);
  CHECK(ch.credits(0) == 0);
  CHECK(ch.occupied_blocks(0) == 128);
  CHECK(l.tx.port(0).queued_frames() == 4);
  CHECK(l.tx.port(0).stats().drops == 0);
  CHECK(ch.stats().overruns == 0);

  // The receiver frees one frame at 20 us: the credits reach the sender one
  // link delay later, and the next frame leaves then.
  const Time t_free = 20_us;
  l.sim.at(t_free, [&] { l.rx.free_one(); });
  l.sim.run();
  REQUIRE(l.rx.got.size() == 9);
  const Time tx_time = (100_Gbps).tx_time(1022);
  CHECK(l.rx.arrivals.back() == t_free + 1_us + tx_time + 1_us);
  // Waiting for credits shows in the port's credit_wait: from the time the
  // 9th frame could have gone (when the 8th finished) to 21 us.
  CHECK(l.tx.port(0).stats().credit_wait == t_free + 1_us - tx_time * 8);

  l.sim.at(30_us, [&] { l.rx.free_all(); });
  l.sim.run(40_us);
  l.rx.free_all();
  l.sim.run();
  CHECK(l.rx.got.size() == 12);
  l.rx.free_all();
  l.sim.run();
  CHECK(ch.credits(0) == 128);
  CHECK(ch.occupied_blocks(0) == 0);
  CHECK(ch.stats().packets == 12);
}

TEST_CASE("credits: VLs have their own buffers; a full VL does not hold back another") {
  Link l;
  for (int i = 0; i < 10; ++i) l.send(0, 1022);  // VL 0 will run out after 8
  for (int i = 0; i < 4; ++i) l.send(1, 1022);
  l.sim.run();
  int vl0 = 0, vl1 = 0;
  for (const Packet& p : l.rx.got) (p.meta().vl == 0 ? vl0 : vl1)++;
  CHECK(vl0 == 8);
  CHECK(vl1 == 4);
  CHECK(l.credits.a_to_b->credits(1) == 128 - 4 * 16);
}

TEST_CASE("credits: blocks are 64 bytes, rounded up") {
  CHECK(credit_blocks(1) == 1);
  CHECK(credit_blocks(64) == 1);
  CHECK(credit_blocks(65) == 2);
  CHECK(credit_blocks(4096 + 94) == 66);
  Link l(false, 2 * 130 * 64);  // 130 blocks a VL
  l.send(0, 64 * 65 + 2);       // 66 blocks
  l.send(0, 64 * 65 + 2);       // 66 more do not fit in the 64 left
  l.sim.run();
  CHECK(l.rx.got.size() == 1);
  CHECK(l.credits.a_to_b->credits(0) == 64);
}

TEST_CASE("credits: a receiver that takes packets at once returns credits a link delay after arrival") {
  Link l(true);
  for (int i = 0; i < 40; ++i) l.send(0, 1022);  // 640 blocks through 128 of buffer
  l.sim.run();
  CHECK(l.rx.got.size() == 40);
  CHECK(l.credits.a_to_b->credits(0) == 128);
  // 128 blocks cover 8 frames; the first credits come back 2 us + one frame
  // after the start, so the link keeps streaming only if 8 frames last that
  // long: at 100 Gb/s they take 0.66 us, so the sender waits.
  CHECK(l.tx.port(0).stats().credit_wait > Time{});
  // Frames arrive at most 8 a round trip.
  const Time rtt = 2_us + (100_Gbps).tx_time(1022);
  CHECK(l.rx.arrivals[8] - l.rx.arrivals[0] >= rtt);
}

TEST_CASE("credits: frames lost on a down link give their credits back") {
  Link l(true);
  Port::set_link_up(l.tx.port(0), false);
  for (int i = 0; i < 20; ++i) l.send(0, 1022);
  l.sim.run();
  CHECK(l.rx.got.empty());
  CHECK(l.tx.port(0).stats().drops == 20);
  CHECK(l.credits.a_to_b->stats().lost == 20);
  CHECK(l.credits.a_to_b->credits(0) == 128);
  Port::set_link_up(l.tx.port(0), true);
  l.send(0, 1022);
  l.sim.run();
  CHECK(l.rx.got.size() == 1);
}

TEST_CASE("credits: a refused frame never took credits") {
  Simulator sim;
  PacketPool pool;
  Endpoint tx(sim, "tx", true), rx(sim, "rx");
  LinkParams lp;
  lp.buffer_bytes = 3000;  // egress queue: two 1 KiB frames
  Port::connect(tx.port(0), rx.port(0), lp, 1);
  auto c = install_credit_flow_control(sim, tx.port(0), rx.port(0), 1 << 20, 1, true, false);
  for (int i = 0; i < 4; ++i) tx.port(0).send(test::ib_frame(pool, 2, 1, 0, 0, 1022 - 26));
  sim.run();
  CHECK(tx.port(0).stats().drops == 1);  // the first left at once, two queued, one refused
  CHECK(rx.got.size() == 3);
  CHECK(c.a_to_b->stats().lost == 0);
  CHECK(c.a_to_b->credits(0) == c.a_to_b->limit_blocks() - 3 * 16);
}

namespace {

// One engine's side of a link cut between two engines, as parallel/ cuts
// one over MPI ranks: the frames its sender put on the wire and the credit
// updates its receiver sent back wait here for the window's end.
struct Cut final : RemoteLink {
  Link* other = nullptr;  // the engine that runs the other end
  std::vector<Port::InFlight> frames;
  struct Update {
    Time at;
    uint64_t order;
    uint8_t vl;
    uint64_t blocks;
  };
  std::vector<Update> updates;
  void sent(Port& from) override {
    while (!from.wire().empty()) frames.push_back(from.wire().take_front());
  }
  void gate_update(Port&, Time at, uint64_t order, uint8_t vl, uint64_t blocks) override {
    updates.push_back({at, order, vl, blocks});
  }
  void deliver() {
    for (Port::InFlight& f : frames) other->tx.port(0).put_on_wire(std::move(f));
    frames.clear();
    for (const Update& u : updates) other->tx.port(0).gate()->remote_update(u.at, u.order, u.vl, u.blocks);
    updates.clear();
  }
};

}  // namespace

TEST_CASE("credits: a link split over two engines runs as on one, the credits handed across") {
  for (const bool frees_at_once : {false, true}) {
    CAPTURE(frees_at_once);
    Link one(frees_at_once), a(frees_at_once), b(frees_at_once);
    for (Link* l : {&one, &a, &b}) {
      l->tx.set_context(1);
      l->rx.set_context(2);
    }
    a.sim.set_foreign({false, false, true});  // a runs the sender only
    b.sim.set_foreign({false, true, false});  // b the receiver only
    Cut to_b, to_a;
    to_b.other = &b;
    to_a.other = &a;
    a.tx.port(0).set_remote(&to_b);
    b.tx.port(0).set_remote(&to_a);
    for (Link* l : {&one, &a}) {
      Simulator::Scope as_tx(l->sim, 1);
      for (int i = 0; i < 30; ++i) l->send(0, 1022);  // 16 blocks each: 8 fit
    }
    if (!frees_at_once)
      for (Link* l : {&one, &b})
        for (const Time t : {20_us, 30_us, 40_us, 50_us})
          l->sim.at(t, [l] {
            Simulator::Scope as_rx(l->sim, 2);
            l->rx.free_all();
          });
    one.sim.run();
    uint64_t updates = 0;
    // Windows shorter than the link's 1 us delay: nothing sent in one
    // arrives before it ends.
    for (Time t = Time{}; t <= 100_us; t = t + 500_ns) {
      a.sim.run(t);
      b.sim.run(t);
      updates += to_a.updates.size();
      to_b.deliver();
      to_a.deliver();
    }
    CHECK(updates > 0);
    CHECK(b.rx.arrivals == one.rx.arrivals);
    CHECK(b.rx.got.size() == 30);
    CHECK(a.tx.port(0).stats().credit_wait == one.tx.port(0).stats().credit_wait);
    CHECK(a.credits.a_to_b->credits(0) == one.credits.a_to_b->credits(0));
    CHECK(b.credits.a_to_b->occupied_blocks(0) == one.credits.a_to_b->occupied_blocks(0));
  }
}

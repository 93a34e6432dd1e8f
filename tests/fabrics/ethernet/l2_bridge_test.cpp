#include "fabrics/ethernet/l2_bridge.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "tests/fixtures/probe_node.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using rdmasim::test::eth_frame;
using rdmasim::test::ProbeNode;

namespace {

const MacAddress kA = MacAddress::local(0xA), kB = MacAddress::local(0xB), kC = MacAddress::local(0xC);

// Probes p[0..n-1] on bridge ports 0..n-1.
struct Bench {
  Simulator sim;
  PacketPool pool;
  std::vector<std::unique_ptr<ProbeNode>> p;
  std::unique_ptr<L2Bridge> br;
  std::vector<const Packet*> discarded;
  uint64_t discards = 0;

  explicit Bench(int n, SwitchConfig cfg = {}, Time ageing = L2Bridge::kDefaultAgeing) {
    br = std::make_unique<L2Bridge>(sim, "br", 0x100, cfg, ageing);
    LinkParams link;
    for (int i = 0; i < n; ++i) {
      p.push_back(std::make_unique<ProbeNode>(sim, "p" + std::to_string(i)));
      Port::connect(p.back()->port(0), br->add_port(), link, 1);
    }
    br->on_discard([this](const Packet&) { ++discards; });
  }
  void advance(Time t) {
    sim.at(sim.now() + t, [] {});
    sim.run();
  }
  void send(int from, Packet f) {
    p[from]->port(0).send(std::move(f));
    sim.run();
  }
  // How many frames each probe has received so far.
  std::vector<size_t> counts() const {
    std::vector<size_t> c;
    for (auto& x : p) c.push_back(x->got.size());
    return c;
  }
};

}  // namespace

TEST_CASE("l2 bridge: floods unknown unicast, learns, then forwards to one port") {
  Bench b(3);
  b.send(0, eth_frame(b.pool, kB, kA));  // B unknown: flood
  CHECK(b.counts() == std::vector<size_t>{0, 1, 1});
  CHECK(b.br->stats().flooded == 1);
  CHECK(b.br->lookup(0, kA) == 0);

  b.send(1, eth_frame(b.pool, kA, kB));  // A known on port 0
  CHECK(b.counts() == std::vector<size_t>{1, 1, 1});
  CHECK(b.br->lookup(0, kB) == 1);

  b.send(0, eth_frame(b.pool, kB, kA));  // now B is known
  CHECK(b.counts() == std::vector<size_t>{1, 2, 1});
  CHECK(b.br->stats().forwarded == 2);
  // The frame is relayed unchanged.
  CHECK(test::dst_of(b.p[1]->got.back().bytes) == kB);
  CHECK(test::src_of(b.p[1]->got.back().bytes) == kA);
}

TEST_CASE("l2 bridge: broadcast and multicast flood; reserved group addresses stay") {
  Bench b(3);
  b.send(0, eth_frame(b.pool, MacAddress::broadcast(), kA));
  CHECK(b.counts() == std::vector<size_t>{0, 1, 1});
  b.send(1, eth_frame(b.pool, MacAddress{{0x33, 0x33, 0xFF, 0, 0, 1}}, kB));
  CHECK(b.counts() == std::vector<size_t>{1, 1, 2});
  // 01:80:C2:00:00:01 (PAUSE/PFC) and ...:0E (LLDP) are never relayed.
  b.send(0, eth_frame(b.pool, MacAddress{{0x01, 0x80, 0xC2, 0, 0, 0x01}}, kA));
  b.send(0, eth_frame(b.pool, MacAddress{{0x01, 0x80, 0xC2, 0, 0, 0x0E}}, kA));
  CHECK(b.counts() == std::vector<size_t>{1, 1, 2});
  CHECK(b.br->stats().reserved == 2);
  CHECK(b.discards == 2);
  // A multicast source is never learned.
  b.send(2, eth_frame(b.pool, kA, MacAddress{{0x01, 0, 0x5E, 0, 0, 1}}));
  CHECK_FALSE(b.br->lookup(0, MacAddress{{0x01, 0, 0x5E, 0, 0, 1}}));
}

TEST_CASE("l2 bridge: a frame for the port it came from is filtered") {
  Bench b(3);
  b.send(0, eth_frame(b.pool, MacAddress::broadcast(), kA));  // A on port 0
  const auto before = b.counts();
  b.send(0, eth_frame(b.pool, kA, kC));  // C says something to A, from behind port 0 too
  CHECK(b.counts() == before);
  CHECK(b.br->stats().filtered == 1);
  CHECK(b.discards == 1);
  CHECK(b.br->lookup(0, kC) == 0);
}

TEST_CASE("l2 bridge: a blocked port neither learns, forwards nor floods") {
  Bench b(3);
  b.br->set_blocked(2, true);
  CHECK(b.br->blocked(2));
  CHECK_FALSE(b.br->blocked(1));
  b.send(0, eth_frame(b.pool, MacAddress::broadcast(), kA));
  CHECK(b.counts() == std::vector<size_t>{0, 1, 0});
  b.send(2, eth_frame(b.pool, kA, kC));  // arrives on the blocked port
  CHECK(b.counts() == std::vector<size_t>{0, 1, 0});
  CHECK(b.br->stats().blocked == 1);
  CHECK_FALSE(b.br->lookup(0, kC));
  // Not even to a destination learned there (it cannot be, but say a stale one).
  b.send(1, eth_frame(b.pool, kC, kB));
  CHECK(b.counts() == std::vector<size_t>{1, 1, 0});  // flooded to port 0 only
}

TEST_CASE("l2 bridge: entries age out") {
  Bench b(3, {}, 10_us);
  b.send(0, eth_frame(b.pool, MacAddress::broadcast(), kA));
  CHECK(b.br->lookup(0, kA) == 0);
  b.advance(5_us);
  CHECK(b.br->lookup(0, kA) == 0);
  b.advance(10_us);
  CHECK_FALSE(b.br->lookup(0, kA));
  b.send(1, eth_frame(b.pool, kA, kB));  // A forgotten: flooded again
  CHECK(b.counts() == std::vector<size_t>{1, 1, 2});
  const uint64_t learned = b.br->stats().learned;
  b.send(0, eth_frame(b.pool, kB, kA));  // relearned
  CHECK(b.br->stats().learned == learned + 1);
  CHECK(b.br->lookup(0, kA) == 0);
}

TEST_CASE("l2 bridge: learning is per VLAN and tags pass through unchanged") {
  Bench b(3);
  b.send(0, eth_frame(b.pool, MacAddress::broadcast(), kA, 100, 5, 10));  // A in VLAN 10 on port 0
  b.send(1, eth_frame(b.pool, MacAddress::broadcast(), kA, 100, 0, 20));  // A in VLAN 20 on port 1
  CHECK(b.br->lookup(10, kA) == 0);
  CHECK(b.br->lookup(20, kA) == 1);
  CHECK_FALSE(b.br->lookup(0, kA));
  b.send(2, eth_frame(b.pool, kA, kC, 100, 5, 10));
  REQUIRE(b.p[0]->got.size() == 2);
  const auto& f = b.p[0]->got.back();
  auto tag = ConstVlanView::check(ConstEthernetView::check(f.bytes)->payload());
  CHECK(tag->vid() == 10);
  CHECK(tag->pcp() == 5);
  CHECK(f.priority == 5);
}

TEST_CASE("l2 bridge: store-and-forward and cut-through latency") {
  LinkParams link;  // 100 Gb/s, 1 us
  const Time tx = link.rate.tx_time(1000);
  {
    Bench b(2, {300_ns, SwitchMode::store_and_forward});
    b.send(0, eth_frame(b.pool, kB, kA, 1000));
    REQUIRE(b.p[1]->got.size() == 1);
    CHECK(b.p[1]->got[0].at == tx + 1_us + 300_ns + tx + 1_us);
  }
  {
    Bench b(2, {300_ns, SwitchMode::cut_through});
    b.send(0, eth_frame(b.pool, kB, kA, 1000));
    REQUIRE(b.p[1]->got.size() == 1);
    CHECK(b.p[1]->got[0].at == 1_us + 300_ns + tx + 1_us);  // the first bit left 300 ns after it came
  }
}

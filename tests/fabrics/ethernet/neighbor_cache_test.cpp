#include "fabrics/ethernet/neighbor_cache.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {
Ipv6Address ip(const char* text) { return *Ipv6Address::parse(text); }

struct Bench {
  Simulator sim;
  PacketPool pool;
  std::vector<std::pair<Time, Ipv6Address>> asked;
  NeighborCache cache;
  explicit Bench(NeighborCache::Params p = {})
      : cache(sim, p, [this](const Ipv6Address& a) {
          asked.push_back({sim.now(), a});
        }) {}
  Packet frame(uint8_t tag, size_t n = 100) {
    Packet p = pool.make();
    auto b = p.push_back(n);
    b[0] = std::byte{tag};
    return p;
  }
};
}  // namespace

TEST_CASE("neighbor cache: frames wait for the answer and leave in order") {
  Bench b;
  const Ipv6Address x = ip("fe80::1");
  CHECK_FALSE(b.cache.lookup(x));
  CHECK(b.cache.hold(x, b.frame(1)));
  CHECK(b.cache.hold(x, b.frame(2)));
  b.cache.resolve(x);  // already being resolved: no second solicitation
  REQUIRE(b.asked.size() == 1);
  CHECK(b.asked[0].second == x);
  CHECK(b.pool.in_use() == 2);

  auto ready = b.cache.learn(x, MacAddress::local(7));
  REQUIRE(ready.size() == 2);
  CHECK(u8(ready[0].bytes()[0]) == 1);
  CHECK(u8(ready[1].bytes()[0]) == 2);
  CHECK(b.cache.lookup(x) == MacAddress::local(7));
  CHECK(b.cache.stats().resolved == 1);
  CHECK(b.cache.stats().held == 2);
  // Answered: no retransmission, nothing left to run.
  b.sim.run();
  CHECK(b.asked.size() == 1);
  CHECK(b.sim.now() == Time{});
  // Resolved addresses are not asked again.
  b.cache.resolve(x);
  CHECK(b.asked.size() == 1);
}

TEST_CASE("neighbor cache: retransmits every RETRANS_TIMER, then gives up and drops") {
  Bench b;
  const Ipv6Address x = ip("fe80::2");
  b.cache.hold(x, b.frame(1));
  b.sim.run();
  REQUIRE(b.asked.size() == 3);  // MAX_MULTICAST_SOLICIT
  CHECK(b.asked[0].first == Time{});
  CHECK(b.asked[1].first == 1_s);
  CHECK(b.asked[2].first == 2_s);
  CHECK(b.sim.now() == 3_s);
  CHECK(b.cache.stats().failed == 1);
  CHECK(b.cache.stats().dropped == 1);
  CHECK(b.pool.in_use() == 0);
  // The next frame starts over.
  b.cache.hold(x, b.frame(2));
  CHECK(b.asked.size() == 4);
}

TEST_CASE("neighbor cache: the queue is bounded in bytes") {
  NeighborCache::Params p;
  p.hold_bytes = 250;
  Bench b(p);
  const Ipv6Address x = ip("fe80::3");
  CHECK(b.cache.hold(x, b.frame(1)));
  CHECK(b.cache.hold(x, b.frame(2)));
  CHECK_FALSE(b.cache.hold(x, b.frame(3)));
  CHECK(b.cache.stats().dropped == 1);
  CHECK(b.cache.learn(x, MacAddress::local(1)).size() == 2);
}

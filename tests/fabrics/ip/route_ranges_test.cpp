// A switch's routes kept as ranges of addresses (fabrics/ip/route_ranges.hpp):
// the same answers as one entry an address, in a few ranges when routes
// follow the addressing plan.
#include "fabrics/ip/route_ranges.hpp"

#include <doctest/doctest.h>

#include <map>

#include "core/random.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/l3_switch.hpp"
#include "tests/fixtures/network.hpp"
#include "topologies/generate.hpp"

using namespace rdmasim;

TEST_CASE("route ranges: consecutive addresses with one set are one range; lookups outside them miss") {
  RouteRanges<uint32_t> r;
  CHECK(r.find(5) == nullptr);
  for (uint32_t a = 10; a < 20; ++a) r.set(a, 1);
  for (uint32_t a = 20; a < 30; ++a) r.set(a, 2);
  CHECK(r.ranges() == 2);
  CHECK(*r.find(10) == 1);
  CHECK(*r.find(19) == 1);
  CHECK(*r.find(20) == 2);
  CHECK(r.find(9) == nullptr);
  CHECK(r.find(30) == nullptr);
  SUBCASE("one address changed splits its range, and changed back joins it again") {
    r.set(15, 3);
    CHECK(r.ranges() == 4);
    CHECK(*r.find(14) == 1);
    CHECK(*r.find(15) == 3);
    CHECK(*r.find(16) == 1);
    r.set(15, 1);
    CHECK(r.ranges() == 2);
  }
  SUBCASE("a gap filled joins both sides") {
    r.set(40, 2);
    r.set(31, 2);
    CHECK(r.ranges() == 4);
    r.set(30, 2);
    CHECK(r.ranges() == 3);
    CHECK(*r.find(31) == 2);
  }
  SUBCASE("the ends of the key space") {
    RouteRanges<uint32_t> e;
    e.set(UINT32_MAX, 7);
    e.set(0, 7);
    e.set(UINT32_MAX - 1, 7);
    CHECK(e.ranges() == 2);
    CHECK(*e.find(UINT32_MAX) == 7);
    CHECK(e.find(1) == nullptr);
  }
}

TEST_CASE("route ranges: any order of routes gives what a map of one entry an address gives") {
  Rng rng(7);
  RouteRanges<unsigned __int128> r;
  std::map<unsigned __int128, uint32_t> ref;
  const unsigned __int128 base = static_cast<unsigned __int128>(0xFD00) << 112;
  for (int i = 0; i < 5000; ++i) {
    const unsigned __int128 a = base + rng.between(0, 300);
    const auto v = static_cast<uint32_t>(rng.between(0, 3));
    r.set(a, v);
    ref[a] = v;
  }
  for (uint64_t off = 0; off <= 302; ++off) {
    const uint32_t* got = r.find(base + off);
    const auto it = ref.find(base + off);
    REQUIRE((got != nullptr) == (it != ref.end()));
    if (got) CHECK(*got == it->second);
  }
  CHECK(r.ranges() <= ref.size());
}

TEST_CASE("routes to a range of addresses: appended behind the last range, or set one by one") {
  Rng rng(11);
  RouteRanges<uint32_t> r;
  std::map<uint32_t, uint32_t> ref;
  const auto both = [&](uint32_t first, uint32_t last, uint32_t v) {
    r.set(first, last, v);
    for (uint32_t a = first; a <= last; ++a) ref[a] = v;
  };
  both(10, 19, 1);
  both(20, 29, 1);  // continues the last range
  CHECK(r.ranges() == 1);
  both(30, 30, 2);
  both(40, 49, 2);  // a gap: a range of its own
  CHECK(r.ranges() == 3);
  for (int i = 0; i < 300; ++i) {  // over what is there: one address at a time
    const auto first = static_cast<uint32_t>(rng.between(0, 60));
    both(first, first + static_cast<uint32_t>(rng.between(0, 8)), static_cast<uint32_t>(rng.between(0, 3)));
  }
  for (uint32_t a = 0; a <= 75; ++a) {
    const uint32_t* got = r.find(a);
    const auto it = ref.find(a);
    REQUIRE((got != nullptr) == (it != ref.end()));
    if (got) CHECK(*got == it->second);
  }
}

TEST_CASE("an L3 switch of a k = 8 fat tree holds its routes to 128 hosts in a few hundred bytes") {
  ExperimentConfig cfg;
  cfg.fabric = "roce_v2";
  cfg.topology = generate_fat_tree(8, {}, {});
  test::BuiltNetwork n(cfg);
  size_t most = 0;
  for (int i = n.net.graph.host_count(); i < n.net.graph.size(); ++i)
    most = std::max(most, static_cast<L3Switch&>(*n.net.nodes[static_cast<size_t>(i)]).route_bytes());
  MESSAGE("largest switch's forwarding state: " << most << " bytes");
  // One entry an address (a hash map and a tree, IPv4 and IPv6) took about 12 KiB at 128 hosts.
  CHECK(most < 1024);
}

TEST_CASE("an L3 switch's routes, set a leaf's hosts at a time, are each host's shortest paths") {
  for (const bool fat : {true, false}) {
    CAPTURE(fat);
    ExperimentConfig cfg;
    cfg.fabric = "roce_v2";
    cfg.topology = fat ? generate_fat_tree(4, {}, {}) : generate_leaf_spine(2, 3, 3, {}, {});
    test::BuiltNetwork n(cfg);
    const Graph& g = n.net.graph;
    const HostPaths paths(g);
    std::vector<uint16_t> want;
    for (int s = g.host_count(); s < g.size(); ++s)
      for (int h = 0; h < g.host_count(); ++h) {
        CAPTURE(g.name(s));
        CAPTURE(g.name(h));
        paths.next_hops(s, h, want);
        const auto& sw = static_cast<const L3Switch&>(*n.net.nodes[static_cast<size_t>(s)]);
        const IpEndpoint e = host_endpoint(h);
        REQUIRE(sw.route(e.ipv4));
        CHECK(*sw.route(e.ipv4) == want);
        REQUIRE(sw.route(e.ipv6));
        CHECK(*sw.route(e.ipv6) == want);
      }
  }
}

TEST_CASE("host addresses stay distinct past 65,535 hosts (a k = 64 fat tree has 65,536)") {
  // Host i is number i + 1: the 65,536th took fd00:: when only two bytes carried it.
  const IpEndpoint last = host_endpoint(65535), first = host_endpoint(0), past = host_endpoint(70000);
  Ipv6Address prefix;  // fd00::
  prefix.octets[0] = 0xFD;
  CHECK(last.ipv6 != prefix);
  CHECK(last.ipv6.octets[13] == 1);
  CHECK(last.ipv6 != first.ipv6);
  CHECK(past.ipv6 != host_endpoint(70000 - 65536).ipv6);
  CHECK(last.ipv4.to_u32() == 0x0A000000u + 65536);
}

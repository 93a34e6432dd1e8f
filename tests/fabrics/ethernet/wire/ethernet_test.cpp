#include "fabrics/ethernet/wire/ethernet.hpp"

#include <doctest/doctest.h>

#include <set>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("ethernet: MAC address text forms") {
  const auto m = MacAddress::parse("7C:FE:90:75:3c:d8");
  REQUIRE(m);
  CHECK(m->octets == std::array<uint8_t, 6>{0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8});
  CHECK(m->to_string() == "7c:fe:90:75:3c:d8");
  CHECK(*MacAddress::parse("7c-fe-90-75-3c-d8") == *m);
  CHECK_FALSE(MacAddress::parse("7c:fe:90:75:3c"));
  CHECK_FALSE(MacAddress::parse("7c:fe:90:75:3c:dg"));
  CHECK_FALSE(MacAddress::parse("7c:fe:90:75:3c:d8:"));
  CHECK(MacAddress::local(0x01020304).to_string() == "02:00:01:02:03:04");
  CHECK_FALSE(MacAddress::local(7).is_multicast());
  CHECK(MacAddress::broadcast().is_broadcast());
  CHECK(MacAddress::broadcast().is_multicast());
  CHECK(MacAddress::parse("01:80:c2:00:00:01")->is_multicast());
}

TEST_CASE("ethernet: switch port MACs are unique past port 255") {
  // The plan's bases (fabrics/ip/l3_network.cpp): node n's ports from
  // 0x01000000 + n * 256. The first 256 are what they always were.
  const auto base = [](uint32_t node) { return 0x01000000u + (node << 8); };
  CHECK(MacAddress::switch_port(base(600), 255).to_string() == "02:00:01:02:58:ff");
  CHECK(MacAddress::switch_port(base(601), 0).to_string() == "02:00:01:02:59:00");
  CHECK(MacAddress::switch_port(base(600), 256).to_string() == "02:81:02:58:01:00");
  std::set<MacAddress> seen;
  for (uint32_t node : {600u, 601u, 65536u + 5119u})
    for (uint32_t port : {0u, 1u, 255u, 256u, 257u, 300u, 65535u}) {
      const MacAddress m = MacAddress::switch_port(base(node), static_cast<uint16_t>(port));
      CHECK(seen.insert(m).second);
      CHECK((m.octets[0] == 0x02 && !m.is_multicast()));    // locally administered unicast
      CHECK((m.octets[1] != 0x00 || m.octets[2] != 0x00));  // no host's (02:00:00:...)
    }
}

TEST_CASE("ethernet: header round trip") {
  // The RoCE v1 frame of Scapy's test/contrib/roce.uts starts like this.
  auto b = hex("7c fe 90 75 3c d8  7c fe 90 75 3c d9  89 15  60 20");
  const auto v = ConstEthernetView::check(b);
  REQUIRE(v);
  CHECK(v->dst().to_string() == "7c:fe:90:75:3c:d8");
  CHECK(v->src().to_string() == "7c:fe:90:75:3c:d9");
  CHECK(v->ethertype() == ethertype::kRoce);
  CHECK(v->payload().size() == 2);
  const EthernetHeader h = EthernetHeader::parse(*v);
  CHECK(h.ethertype == 0x8915);
  std::vector<std::byte> out(14);
  h.emit(*EthernetView::check(out));
  CHECK(std::equal(out.begin(), out.end(), b.begin()));
  CHECK_FALSE(EthernetView::check(std::span<std::byte>(out).first(13)));
}

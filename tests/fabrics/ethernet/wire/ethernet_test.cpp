#include "fabrics/ethernet/wire/ethernet.hpp"

#include <doctest/doctest.h>

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

#include "fabrics/ethernet/wire/arp.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("arp: a request, RFC 826 layout by hand") {
  // who-has 10.0.0.2 tell 10.0.0.1 (02:00:00:00:00:01)
  auto b =
      hex("00 01 08 00 06 04 00 01"
          "02 00 00 00 00 01  0a 00 00 01"
          "00 00 00 00 00 00  0a 00 00 02");
  const auto v = ConstArpView::check(b);
  REQUIRE(v);
  CHECK(v->valid());
  CHECK(v->operation() == ArpOperation::Request);
  CHECK(v->sender_mac() == MacAddress::local(1));
  CHECK(v->sender_ip().to_string() == "10.0.0.1");
  CHECK(v->target_mac() == MacAddress{});
  CHECK(v->target_ip().to_string() == "10.0.0.2");

  const ArpPacket p = ArpPacket::parse(*v);
  std::vector<std::byte> out(28, std::byte{0xEE});
  p.emit(*ArpView::check(out));
  CHECK(out == b);
}

TEST_CASE("arp: reply and validity") {
  ArpPacket r{ArpOperation::Reply, MacAddress::local(2), Ipv4Address{{10, 0, 0, 2}}, MacAddress::local(1),
              Ipv4Address{{10, 0, 0, 1}}};
  std::vector<std::byte> out(28);
  r.emit(*ArpView::check(out));
  CHECK(out == hex("00 01 08 00 06 04 00 02  02 00 00 00 00 02 0a 00 00 02  02 00 00 00 00 01 0a 00 00 01"));
  CHECK(ArpPacket::parse(*ConstArpView::check(out)) == r);
  out[1] = std::byte{6};  // IEEE 802 hardware type: not ours
  CHECK_FALSE(ArpView::check(out)->valid());
  CHECK_FALSE(ArpView::check(std::span<std::byte>(out).first(27)));
}

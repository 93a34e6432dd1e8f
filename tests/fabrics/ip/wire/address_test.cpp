#include "fabrics/ip/wire/address.hpp"

#include <doctest/doctest.h>

using namespace rdmasim;

TEST_CASE("address: IPv4 text and integer forms") {
  const auto a = Ipv4Address::parse("10.0.1.254");
  REQUIRE(a);
  CHECK(a->octets == std::array<uint8_t, 4>{10, 0, 1, 254});
  CHECK(a->to_u32() == 0x0A0001FE);
  CHECK(Ipv4Address::from_u32(0x0A0001FE) == *a);
  CHECK(a->to_string() == "10.0.1.254");
  CHECK_FALSE(Ipv4Address::parse("10.0.1"));
  CHECK_FALSE(Ipv4Address::parse("10.0.1.256"));
  CHECK_FALSE(Ipv4Address::parse("10.0.1.1 "));
  CHECK_FALSE(Ipv4Address::parse(""));
}

TEST_CASE("address: IPv6 text forms, RFC 5952 output") {
  const auto a = Ipv6Address::parse("2001:0DB8:0:0:0:0:0:1");
  REQUIRE(a);
  CHECK(a->octets[0] == 0x20);
  CHECK(a->octets[1] == 0x01);
  CHECK(a->octets[15] == 0x01);
  CHECK(a->to_string() == "2001:db8::1");
  CHECK_FALSE(Ipv6Address::parse("2001:db8::1::2"));
  CHECK_FALSE(Ipv6Address::parse("fe80::g"));
}

TEST_CASE("address: IPv4-mapped IPv6, the RoCE v2 GID of an IPv4 interface") {
  const Ipv6Address m = Ipv6Address::v4_mapped(Ipv4Address{{10, 0, 0, 1}});
  CHECK(m.is_v4_mapped());
  CHECK(m.to_string() == "::ffff:10.0.0.1");
  CHECK(*Ipv6Address::parse("::ffff:10.0.0.1") == m);
  CHECK_FALSE(Ipv6Address::parse("fe80::1")->is_v4_mapped());
}

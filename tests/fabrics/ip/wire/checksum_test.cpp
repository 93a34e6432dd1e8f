#include "fabrics/ip/wire/checksum.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("checksum: RFC 1071 section 3 example") {
  const auto b = hex("00 01 f2 03 f4 f5 f6 f7");
  CHECK(checksum_add(0, b) == 0xddf2);
  CHECK(checksum_fold(checksum_add(0, b)) == 0x220d);
}

TEST_CASE("checksum: an odd final byte is padded with zero") {
  CHECK(checksum_add(0, hex("01")) == 0x0100);
  CHECK(checksum_add(0, hex("12 34 56")) == 0x1234 + 0x5600);
  // Even chunks then the odd tail equal the whole.
  const auto b = hex("45 00 00 73 00 00 40 00 40 11 c0");
  const std::span<const std::byte> s(b);
  CHECK(checksum_add(checksum_add(0, s.first(8)), s.subspan(8)) == checksum_add(0, s));
  CHECK(checksum_add(checksum_add(0, s.first(2)), s.subspan(2)) == checksum_add(0, s));
}

TEST_CASE("checksum: carries fold around, sums of many words stay exact") {
  std::vector<std::byte> ff(100000, std::byte{0xFF});
  CHECK(checksum_add(0, ff) == 0xFFFF);
  CHECK(checksum_fold(checksum_add(0, ff)) == 0);
  CHECK(checksum_add16(0xFFFF, 1) == 1);  // end-around carry
  CHECK(checksum_fold(0x2ddf0) == 0x220d);
}

TEST_CASE("checksum: a well-known IPv4 header") {
  // Wikipedia "IPv4 header checksum" example, checksum field b861.
  const auto h = hex("45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00 01 c0 a8 00 c7");
  CHECK(checksum_fold(checksum_add(0, h)) == 0);
  auto z = h;
  z[10] = z[11] = std::byte{0};
  CHECK(checksum_fold(checksum_add(0, z)) == 0xb861);
}

TEST_CASE("checksum: RFC 1624 section 4 example, eqn. 3 gives 0x0000") {
  CHECK(checksum_update(0xdd2f, 0x5555, 0x3285) == 0x0000);
}

TEST_CASE("checksum: incremental update equals a full recomputation") {
  auto h = hex("45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00 01 c0 a8 00 c7");
  for (int ttl = 64; ttl > 0; --ttl) {
    const uint16_t old_word = load_be16(std::span<const std::byte>(h).subspan(8, 2));
    h[8] = std::byte(ttl - 1);
    const uint16_t c = checksum_update(load_be16(std::span<const std::byte>(h).subspan(10, 2)), old_word,
                                       load_be16(std::span<const std::byte>(h).subspan(8, 2)));
    store_be16(std::span<std::byte>(h).subspan(10, 2), c);
    REQUIRE(checksum_fold(checksum_add(0, h)) == 0);
  }
}

TEST_CASE("checksum: pseudo-headers") {
  const Ipv4Address a{{192, 168, 0, 7}};
  // RFC 768: src, dst, 0, 17, length.
  CHECK(pseudo_header_sum(a, a, kIpProtoUdp, 44) ==
        checksum_add(0, hex("c0 a8 00 07 c0 a8 00 07 00 11 00 2c")));
  const Ipv6Address s = *Ipv6Address::parse("2001:db8::1"), d = *Ipv6Address::parse("2001:db8::2");
  // RFC 8200 8.1: src, dst, 32-bit length, 3 zero bytes, next header.
  CHECK(pseudo_header_sum(s, d, kIpProtoUdp, 0x12345) ==
        checksum_add(0, hex("20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
                            "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 02"
                            "00 01 23 45 00 00 00 11")));
}

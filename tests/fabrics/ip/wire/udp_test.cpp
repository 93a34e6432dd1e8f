#include "fabrics/ip/wire/udp.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("udp: fields and round trip") {
  auto b = hex("c0 00 12 b7 00 0c ab cd  01 02 03 04");
  const auto v = ConstUdpView::check(b);
  REQUIRE(v);
  CHECK(v->valid());
  CHECK(v->src_port() == 49152);
  CHECK(v->dst_port() == kUdpPortRoceV2);
  CHECK(v->length() == 12);
  CHECK(v->checksum() == 0xabcd);
  CHECK(v->payload().size() == 4);
  const UdpHeader h = UdpHeader::parse(*v);
  CHECK(h == UdpHeader{49152, 4791, 12, 0xabcd});
  std::vector<std::byte> out(8);
  h.emit(*UdpView::check(out));
  CHECK(std::equal(out.begin(), out.end(), b.begin()));
  CHECK_FALSE(UdpView::check(std::span<std::byte>(out).first(7)));
  auto w = *UdpView::check(b);
  w.set_length(13);
  CHECK_FALSE(w.valid());
  w.set_length(7);
  CHECK_FALSE(w.valid());
}

TEST_CASE("udp: checksum over IPv4, a RoCE v2 frame built by Scapy's tests") {
  // Scapy test/contrib/roce.uts "RoCE layer": UDP 49152 -> 4791 between
  // 192.168.0.7 and itself, UC SEND ONLY with a 20-byte payload and ICRC;
  // Scapy expects the UDP checksum 0xaca2.
  auto udp =
      hex("c0 00 12 b7 00 2c 00 00"
          "24 60 ff ff 00 00 00 d3 00 cf 17 10"
          "46 30 81 8b e2 89 35 d9 0e 9a 95 50 54 01 be 88 5e 50 00 00"
          "78 f3 53 f3");
  const Ipv4Address a{{192, 168, 0, 7}};
  auto v = *UdpView::check(udp);
  CHECK(v.compute_checksum(a, a) == 0xaca2);
  v.fill_checksum(a, a);
  CHECK(v.checksum() == 0xaca2);
  CHECK(v.verify_checksum(a, a));
  CHECK_FALSE(v.verify_checksum(a, Ipv4Address{{192, 168, 0, 8}}));
  v.set_checksum(0);  // "no checksum" is fine over IPv4
  CHECK(v.verify_checksum(a, a));
}

TEST_CASE("udp: checksum over IPv6, odd and even lengths") {
  const Ipv6Address s = *Ipv6Address::parse("2001:db8::1"), d = *Ipv6Address::parse("2001:db8::2");
  // Expected values from an independent RFC 1071 sum (Python) over the
  // RFC 8200 pseudo-header and these bytes.
  auto even = hex("c0 00 12 b7 00 12 00 00  68 65 6c 6c 6f 20 52 6f 43 45");  // "hello RoCE"
  auto odd = hex("04 d2 12 b7 00 0b 00 00  61 62 63");                        // "abc"
  auto ve = *UdpView::check(even);
  auto vo = *UdpView::check(odd);
  CHECK(ve.compute_checksum(s, d) == 0xf7f6);
  CHECK(vo.compute_checksum(s, d) == 0xc877);
  CHECK_FALSE(vo.verify_checksum(s, d));  // zero is an error over IPv6
  vo.fill_checksum(s, d);
  CHECK(vo.verify_checksum(s, d));
  CHECK_FALSE(vo.verify_checksum(s, s));
}

TEST_CASE("udp: a computed zero is sent as 0xFFFF") {
  // Choose the payload so that the sum is 0xFFFF: checksum 0 -> 0xFFFF.
  const Ipv4Address z{{0, 0, 0, 0}};
  auto b = hex("00 00 00 00 00 0a 00 00 00 00");
  auto v = *UdpView::check(b);
  // pseudo: 17 + 10; header: 10; pad the rest to reach 0xFFFF.
  const uint16_t fill = static_cast<uint16_t>(0xFFFF - 17 - 10 - 10);
  store_be16(std::span<std::byte>(b).subspan(8, 2), fill);
  CHECK(checksum_fold(checksum_add(pseudo_header_sum(z, z, kIpProtoUdp, 10), b)) == 0);
  CHECK(v.compute_checksum(z, z) == 0xFFFF);
}

TEST_CASE("udp: a bad Length stays inside the buffer") {
  const Ipv4Address a{{10, 0, 0, 1}};
  auto b = hex("00 01 00 02 00 03 00 00  aa bb");
  auto v = *UdpView::check(b);
  CHECK_FALSE(v.valid());
  // Length 3: only the header is summed (pseudo-header length as written).
  const uint16_t c3 = v.compute_checksum(a, a);
  CHECK(c3 == checksum_fold(checksum_add(pseudo_header_sum(a, a, kIpProtoUdp, 3), hex("00 01 00 02 00 03"))));
  v.set_length(0xFFFF);  // all 10 bytes there are
  CHECK(v.compute_checksum(a, a) == checksum_fold(checksum_add(pseudo_header_sum(a, a, kIpProtoUdp, 0xFFFF),
                                                               hex("00 01 00 02 ff ff 00 00 aa bb"))));
}

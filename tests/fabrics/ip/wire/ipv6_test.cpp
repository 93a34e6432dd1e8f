#include "fabrics/ip/wire/ipv6.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {
// Version 6, traffic class 0xb9 (DSCP 46, ECT(1)), flow label 0x12345,
// payload 16, UDP, hop limit 64, 2001:db8::1 -> 2001:db8::2.
const auto kHeader =
    hex("6b 91 23 45  00 10 11 40"
        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 02");

Ipv6Header expected() {
  Ipv6Header h;
  h.dscp = 46;
  h.ecn = Ecn::Ect1;
  h.flow_label = 0x12345;
  h.payload_length = 16;
  h.next_header = 17;
  h.hop_limit = 64;
  h.src = *Ipv6Address::parse("2001:db8::1");
  h.dst = *Ipv6Address::parse("2001:db8::2");
  return h;
}
}  // namespace

TEST_CASE("ipv6: fields read from hand-written bytes") {
  auto b = kHeader;
  b.resize(56);
  const auto v = ConstIpv6View::check(b);
  REQUIRE(v);
  CHECK(v->valid());
  CHECK(v->version() == 6);
  CHECK(v->traffic_class() == 0xb9);
  CHECK(v->dscp() == 46);
  CHECK(v->ecn() == Ecn::Ect1);
  CHECK(v->flow_label() == 0x12345);
  CHECK(v->payload_length() == 16);
  CHECK(v->next_header() == 17);
  CHECK(v->hop_limit() == 64);
  CHECK(v->src().to_string() == "2001:db8::1");
  CHECK(v->dst().to_string() == "2001:db8::2");
  CHECK(v->payload().size() == 16);
  CHECK(Ipv6Header::parse(*v) == expected());
}

TEST_CASE("ipv6: emit round trip and length checks") {
  std::vector<std::byte> out(40, std::byte{0xEE});
  expected().emit(*Ipv6View::check(out));
  CHECK(out == kHeader);
  CHECK_FALSE(Ipv6View::check(std::span<std::byte>(out).first(39)));
  CHECK_FALSE(Ipv6View::check(out)->valid());  // 16 payload bytes missing
  CHECK(Ipv6View::check(out)->valid_in(56));   // ... held elsewhere (a parked frame's payload)
  CHECK_FALSE(Ipv6View::check(out)->valid_in(55));
  CHECK(Ipv6View::check(out)->payload_start().empty());
  out.resize(56);
  CHECK(Ipv6View::check(out)->valid());
  out[0] = std::byte{0x4b};
  CHECK_FALSE(Ipv6View::check(out)->valid());
}

TEST_CASE("ipv6: ECN marking changes only the two ECN bits") {
  auto b = kHeader;
  auto v = *Ipv6View::check(b);
  v.set_ecn(Ecn::Ce);
  CHECK(v.ecn() == Ecn::Ce);
  CHECK(v.dscp() == 46);
  CHECK(v.flow_label() == 0x12345);
  CHECK(v.version() == 6);
  v.set_flow_label(0xFFFFF);
  CHECK(v.traffic_class() == 0xbb);
  CHECK(v.flow_label() == 0xFFFFF);
}

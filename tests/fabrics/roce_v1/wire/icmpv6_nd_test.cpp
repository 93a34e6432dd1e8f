#include "fabrics/roce_v1/wire/icmpv6_nd.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {
Ipv6Address ip(const char* text) { return *Ipv6Address::parse(text); }

// fe80::ff:fe00:1 (MAC 02:00:00:00:00:01) solicits fe80::ff:fe00:2. The
// checksum 0x7c97 is the one tshark 4.0 reports as [correct] for this message.
const auto kNs =
    hex("87 00 7c 97  00 00 00 00"
        "fe 80 00 00 00 00 00 00 00 00 00 ff fe 00 00 02"
        "01 01 02 00 00 00 00 01");
// ... and fe80::ff:fe00:1 answers fe80::ff:fe00:2: solicited, override, 0x1b1c.
const auto kNa =
    hex("88 00 1b 1c  60 00 00 00"
        "fe 80 00 00 00 00 00 00 00 00 00 ff fe 00 00 01"
        "02 01 02 00 00 00 00 01");
}  // namespace

TEST_CASE("icmpv6 nd: a neighbour solicitation from hand-written bytes") {
  const auto v = ConstNdView::check(kNs);
  REQUIRE(v);
  CHECK(v->type() == 135);
  CHECK(v->code() == 0);
  CHECK(v->checksum() == 0x7c97);
  CHECK(v->target() == ip("fe80::ff:fe00:2"));
  CHECK(v->link_layer(NdOption::SourceLinkLayer) == MacAddress::local(1));
  CHECK_FALSE(v->link_layer(NdOption::TargetLinkLayer));
  CHECK(v->verify_checksum(ip("fe80::ff:fe00:1"), solicited_node(ip("fe80::ff:fe00:2"))));
  CHECK_FALSE(v->verify_checksum(ip("fe80::ff:fe00:3"), solicited_node(ip("fe80::ff:fe00:2"))));

  const auto m = NdMessage::parse(*v);
  REQUIRE(m);
  CHECK(m->type == NdType::NeighborSolicitation);
  CHECK(m->link_layer == MacAddress::local(1));
  std::vector<std::byte> out(m->length(), std::byte{0xEE});
  m->emit(*NdView::check(out), ip("fe80::ff:fe00:1"), ip("ff02::1:ff00:2"));
  CHECK(out == kNs);
}

TEST_CASE("icmpv6 nd: a neighbour advertisement round trip") {
  const auto v = ConstNdView::check(kNa);
  REQUIRE(v);
  const auto m = NdMessage::parse(*v);
  REQUIRE(m);
  CHECK(m->type == NdType::NeighborAdvertisement);
  CHECK_FALSE(m->router);
  CHECK(m->solicited);
  CHECK(m->override_flag);
  CHECK(m->target == ip("fe80::ff:fe00:1"));
  CHECK(m->link_layer == MacAddress::local(1));
  std::vector<std::byte> out(m->length());
  m->emit(*NdView::check(out), ip("fe80::ff:fe00:1"), ip("fe80::ff:fe00:2"));
  CHECK(out == kNa);
}

TEST_CASE("icmpv6 nd: multicast addresses, bad codes and options") {
  CHECK(solicited_node(ip("fe80::211:22ff:fe33:4455")) == ip("ff02::1:ff33:4455"));
  CHECK(ipv6_multicast_mac(ip("ff02::1:ff33:4455")) == MacAddress{{0x33, 0x33, 0xff, 0x33, 0x44, 0x55}});
  auto bad = kNs;
  bad[1] = std::byte{1};  // code 1
  CHECK_FALSE(NdMessage::parse(*ConstNdView::check(bad)));
  bad = kNs;
  bad[25] = std::byte{0};  // option length 0: malformed (RFC 4861 4.6)
  CHECK_FALSE(ConstNdView::check(bad)->link_layer(NdOption::SourceLinkLayer));
  bad = kNs;
  bad[0] = std::byte{128};  // echo request
  CHECK_FALSE(NdMessage::parse(*ConstNdView::check(bad)));
  CHECK_FALSE(ConstNdView::check(std::span(kNs).first(23)));
  // No option at all: still a solicitation (from the unspecified address, DAD).
  const auto bare = NdMessage::parse(*ConstNdView::check(std::span(kNs).first(24)));
  REQUIRE(bare);
  CHECK_FALSE(bare->link_layer);
}

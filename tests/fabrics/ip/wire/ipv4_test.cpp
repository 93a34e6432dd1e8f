#include "fabrics/ip/wire/ipv4.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {
// RFC 791 layout by hand: IHL 5, DSCP 26 / ECT(0) (0x6a), total 0x73, id
// 0x1c46, DF, TTL 64, UDP, checksum, 192.168.0.1 -> 192.168.0.199.
const auto kHeader = hex("45 6a 00 73 1c 46 40 00 40 11 00 00 c0 a8 00 01 c0 a8 00 c7");

Ipv4Header expected() {
  Ipv4Header h;
  h.dscp = 26;
  h.ecn = Ecn::Ect0;
  h.total_length = 0x73;
  h.identification = 0x1c46;
  h.dont_fragment = true;
  h.ttl = 64;
  h.protocol = kIpProtoUdp;
  h.src = Ipv4Address{{192, 168, 0, 1}};
  h.dst = Ipv4Address{{192, 168, 0, 199}};
  return h;
}
}  // namespace

TEST_CASE("ipv4: fields read from hand-written bytes") {
  std::vector<std::byte> b = kHeader;
  b.resize(0x73);
  const auto v = ConstIpv4View::check(b);
  REQUIRE(v);
  CHECK(v->valid());
  CHECK(v->version() == 4);
  CHECK(v->ihl() == 5);
  CHECK(v->tos() == 0x6a);
  CHECK(v->dscp() == 26);
  CHECK(v->ecn() == Ecn::Ect0);
  CHECK(v->total_length() == 0x73);
  CHECK(v->identification() == 0x1c46);
  CHECK(v->dont_fragment());
  CHECK_FALSE(v->more_fragments());
  CHECK(v->fragment_offset() == 0);
  CHECK(v->ttl() == 64);
  CHECK(v->protocol() == 17);
  CHECK(v->src().to_string() == "192.168.0.1");
  CHECK(v->dst().to_string() == "192.168.0.199");
  CHECK(v->payload().size() == 0x73 - 20);
  CHECK(Ipv4Header::parse(*v) == expected());
}

TEST_CASE("ipv4: emit writes the same bytes with a correct checksum") {
  std::vector<std::byte> out(20, std::byte{0xEE});
  auto v = *Ipv4View::check(out);
  expected().emit(v);
  CHECK(v.verify_checksum());
  CHECK(v.checksum() == v.compute_checksum());
  auto want = kHeader;
  store_be16(std::span<std::byte>(want).subspan(10, 2), v.checksum());
  CHECK(out == want);
  // The checksum of the RFC 1071 sum over these exact bytes, by hand.
  CHECK(v.checksum() == checksum_fold(checksum_add(0, kHeader)));
}

TEST_CASE("ipv4: check and valid reject what cannot be an IPv4 header") {
  std::vector<std::byte> b = kHeader;
  CHECK_FALSE(ConstIpv4View::check(std::span<const std::byte>(b).first(19)));
  b.resize(0x73);
  auto v = *Ipv4View::check(b);
  CHECK(v.valid());
  v.set_total_length(0x74);  // beyond the buffer
  CHECK_FALSE(v.valid());
  v.set_total_length(19);  // shorter than the header
  CHECK_FALSE(v.valid());
  v.set_total_length(0x73);
  v.set_version_ihl(4, 4);
  CHECK_FALSE(v.valid());
  v.set_version_ihl(6, 5);
  CHECK_FALSE(v.valid());
}

TEST_CASE("ipv4: valid_in judges a datagram of which the view holds only the headers") {
  // A switch sees a parked frame's headers: the payload is elsewhere.
  std::vector<std::byte> b = kHeader;  // total length 0x73, 20 bytes here
  b.resize(24);
  auto v = *Ipv4View::check(b);
  CHECK_FALSE(v.valid());
  CHECK(v.valid_in(0x73));
  CHECK_FALSE(v.valid_in(0x72));         // shorter than its total length
  CHECK(v.payload_start().size() == 4);  // the transport ports, all the view holds
  b.resize(0x73);
  v = *Ipv4View::check(b);
  CHECK(v.payload_start().size() == 0x73 - 20);
}

TEST_CASE("ipv4: options are skipped by header_len and payload") {
  auto b = hex("46 00 00 1c 00 00 00 00 40 11 00 00 0a 00 00 01 0a 00 00 02  01 01 01 00  aa bb cc dd");
  auto v = *Ipv4View::check(b);
  REQUIRE(v.valid());
  CHECK(v.header_len() == 24);
  CHECK(v.payload().size() == 4);
  CHECK(v.payload()[0] == std::byte{0xaa});
  v.fill_checksum();
  CHECK(v.verify_checksum());
}

TEST_CASE("ipv4: TTL decrement and ECN marking patch the checksum (RFC 1624)") {
  std::vector<std::byte> b(20);
  auto v = *Ipv4View::check(b);
  Ipv4Header h = expected();
  h.ttl = 3;
  h.emit(v);
  v.decrement_ttl();
  CHECK(v.ttl() == 2);
  CHECK(v.verify_checksum());
  CHECK(v.checksum() == v.compute_checksum());
  v.update_ecn(Ecn::Ce);
  CHECK(v.ecn() == Ecn::Ce);
  CHECK(v.dscp() == 26);
  CHECK(v.verify_checksum());
  CHECK(v.checksum() == v.compute_checksum());
  // A checksum that happens to be 0xFFFF/0x0000 territory: sweep identifications.
  for (uint32_t id = 0; id < 65536; id += 7) {
    h.identification = static_cast<uint16_t>(id);
    h.ttl = 255;
    h.ecn = Ecn::Ect0;
    h.emit(v);
    v.decrement_ttl();
    v.update_ecn(Ecn::Ce);
    REQUIRE(v.checksum() == v.compute_checksum());
  }
}

TEST_CASE("ipv4: setters leave neighbouring fields alone") {
  std::vector<std::byte> b(20);
  auto v = *Ipv4View::check(b);
  expected().emit(v);
  v.set_dscp_ecn(46, Ecn::Ect1);
  v.set_flags_fragment(false, true, 0x1FFF);
  CHECK(v.version() == 4);
  CHECK(v.ihl() == 5);
  CHECK(v.dscp() == 46);
  CHECK(v.ecn() == Ecn::Ect1);
  CHECK(v.total_length() == 0x73);
  CHECK_FALSE(v.dont_fragment());
  CHECK(v.more_fragments());
  CHECK(v.fragment_offset() == 0x1FFF);
  CHECK(v.ttl() == 64);
}

TEST_CASE("ipv4: a bad IHL gives a wrong checksum, not a read outside the buffer") {
  auto b = kHeader;  // 20 bytes
  auto v = *Ipv4View::check(b);
  v.set_version_ihl(4, 15);  // claims 60 bytes
  CHECK_FALSE(v.valid());
  CHECK_FALSE(v.verify_checksum());
  v.fill_checksum();  // over the 20 bytes there are
  CHECK(v.verify_checksum());
  v.set_version_ihl(4, 2);
  CHECK_FALSE(v.verify_checksum());
}

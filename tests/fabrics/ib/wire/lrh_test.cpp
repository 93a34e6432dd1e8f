#include "fabrics/ib/wire/lrh.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("lrh: the LRH of IBA Table 29's sample packet") {
  // VL 15, LVer 0, SL 1, LNH 2 (IBA local), DLID 0x375c, PktLen 14 words
  // (52 bytes of headers and payload + 4 of ICRC), SLID 0x17d2.
  const auto bytes = hex("f0 12 37 5c 00 0e 17 d2");
  const auto v = ConstLrhView::check(bytes);
  REQUIRE(v);
  CHECK(v->vl() == 15);
  CHECK(v->lver() == 0);
  CHECK(v->sl() == 1);
  CHECK(v->lnh() == Lnh::IbaLocal);
  CHECK(v->dlid() == 0x375c);
  CHECK(v->pkt_len() == 14);
  CHECK(v->slid() == 0x17d2);
  const Lrh l = Lrh::parse(*v);
  CHECK(l == Lrh{15, 0, 1, Lnh::IbaLocal, 0x375c, 14, 0x17d2});
  std::vector<std::byte> out(8, std::byte{0xEE});
  l.emit(*LrhView::check(out));
  CHECK(out == bytes);
  CHECK(lrh_pkt_len(52 + 4) == 14);
  CHECK_FALSE(LrhView::check(std::span<std::byte>(out).first(7)));
}

TEST_CASE("lrh: PktLen is 11 bits, reserved bits zero; VL changes alone") {
  std::vector<std::byte> out(8);
  Lrh{0, 0, 15, Lnh::IbaGlobal, 0xffff, 0xffff, 1}.emit(*LrhView::check(out));
  CHECK(out == hex("00 f3 ff ff 07 ff 00 01"));
  auto v = *LrhView::check(out);
  CHECK(v.pkt_len() == 0x7ff);
  v.set_vl(7);
  CHECK(out == hex("70 f3 ff ff 07 ff 00 01"));
  CHECK(v.lnh() == Lnh::IbaGlobal);
  CHECK(v.sl() == 15);
}

#include "fabrics/iba/wire/deth.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("deth: the GSI Q_Key from QP 1") {
  const auto bytes = hex("80 01 00 00  00 00 00 01");
  const auto v = ConstDethView::check(bytes);
  REQUIRE(v);
  CHECK(v->qkey() == 0x80010000);
  CHECK(v->src_qp() == 1);
  const Deth d = Deth::parse(*v);
  CHECK(d == Deth{0x80010000, 1});
  std::vector<std::byte> out(8, std::byte{0xEE});
  d.emit(*DethView::check(out));
  CHECK(out == bytes);  // the reserved byte is written as zero
}

TEST_CASE("deth: 24-bit source QP, reserved byte ignored on read") {
  auto bytes = hex("01 02 03 04  ff ab cd ef");
  const Deth d = Deth::parse(*ConstDethView::check(bytes));
  CHECK(d.qkey == 0x01020304);
  CHECK(d.src_qp == 0xabcdef);
  CHECK_FALSE(DethView::check(std::span<std::byte>(bytes).first(7)));
}

#include "fabrics/iba/wire/atomic_eth.hpp"

#include <doctest/doctest.h>

#include "fabrics/iba/wire/atomic_ack_eth.hpp"
#include "fabrics/iba/wire/ieth.hpp"
#include "fabrics/iba/wire/immdt.hpp"
#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("atomic_eth: VA, R_Key, swap/add and compare in order") {
  const auto bytes =
      hex("00 00 7f 00 12 34 56 78  00 00 10 01"
          "00 00 00 00 00 00 00 2a  ff ff ff ff ff ff ff fe");
  const auto v = ConstAtomicEthView::check(bytes);
  REQUIRE(v);
  CHECK(v->va() == 0x7f0012345678);
  CHECK(v->rkey() == 0x1001);
  CHECK(v->swap_add() == 42);
  CHECK(v->compare() == 0xfffffffffffffffe);
  const AtomicEth a = AtomicEth::parse(*v);
  CHECK(a == AtomicEth{0x7f0012345678, 0x1001, 42, 0xfffffffffffffffe});
  std::vector<std::byte> out(28);
  a.emit(*AtomicEthView::check(out));
  CHECK(out == bytes);
  CHECK_FALSE(AtomicEthView::check(std::span<std::byte>(out).first(27)));
}

TEST_CASE("atomic_ack_eth: original remote data") {
  const auto bytes = hex("01 23 45 67 89 ab cd ef");
  const auto a = AtomicAckEth::parse(*ConstAtomicAckEthView::check(bytes));
  CHECK(a.original == 0x0123456789abcdef);
  std::vector<std::byte> out(8);
  a.emit(*AtomicAckEthView::check(out));
  CHECK(out == bytes);
  CHECK_FALSE(AtomicAckEthView::check(std::span<std::byte>(out).first(7)));
}

TEST_CASE("immdt and ieth: four big-endian bytes each") {
  const auto bytes = hex("de ad be ef");
  CHECK(ImmDt::parse(*ConstImmDtView::check(bytes)).imm == 0xdeadbeef);
  CHECK(Ieth::parse(*ConstIethView::check(bytes)).rkey == 0xdeadbeef);
  std::vector<std::byte> out(4);
  ImmDt{0x01020304}.emit(*ImmDtView::check(out));
  CHECK(out == hex("01 02 03 04"));
  Ieth{0xa0b0c0d0}.emit(*IethView::check(out));
  CHECK(out == hex("a0 b0 c0 d0"));
  CHECK_FALSE(ImmDtView::check(std::span<std::byte>(out).first(3)));
  CHECK_FALSE(IethView::check(std::span<std::byte>(out).first(3)));
}

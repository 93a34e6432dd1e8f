#include "fabrics/iba/wire/reth.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("reth: fields of a captured RDMA WRITE ONLY") {
  // VA 0x55d4c0726000, R_Key 0x47b3, DMA length 5 (Scapy test/contrib/roce.uts).
  const auto bytes = hex("00 00 55 d4 c0 72 60 00  00 00 47 b3  00 00 00 05");
  const auto v = ConstRethView::check(bytes);
  REQUIRE(v);
  CHECK(v->va() == 0x55d4c0726000);
  CHECK(v->rkey() == 0x47b3);
  CHECK(v->dma_len() == 5);
  const Reth r = Reth::parse(*v);
  CHECK(r == Reth{0x55d4c0726000, 0x47b3, 5});
  std::vector<std::byte> out(16);
  r.emit(*RethView::check(out));
  CHECK(out == bytes);
}

TEST_CASE("reth: byte order of every field") {
  std::vector<std::byte> out(20, std::byte{0xEE});
  Reth{0x0102030405060708, 0x090a0b0c, 0x0d0e0f10}.emit(*RethView::check(out));
  CHECK(out == hex("01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 ee ee ee ee"));
  CHECK(RethView::check(out)->payload().size() == 4);
  CHECK_FALSE(RethView::check(std::span<std::byte>(out).first(15)));
}

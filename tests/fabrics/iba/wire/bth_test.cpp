#include "fabrics/iba/wire/bth.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {
// The BTH of a ConnectX RoCE v1 RC RDMA WRITE ONLY (Scapy test/contrib/roce.uts):
// opcode 0x0a, M=1 PadCnt=3, P_Key ffff, DestQP 0x10a, A=1, PSN 0xa788bc.
const auto kBth = hex("0a 70 ff ff 00 00 01 0a 80 a7 88 bc");
}  // namespace

TEST_CASE("bth: fields of a captured RDMA WRITE ONLY") {
  const auto v = ConstBthView::check(kBth);
  REQUIRE(v);
  CHECK(v->opcode() == RC_RDMA_WRITE_ONLY);
  CHECK_FALSE(v->solicited());
  CHECK(v->mig_req());
  CHECK(v->pad_count() == 3);
  CHECK(v->tver() == 0);
  CHECK(v->pkey() == 0xffff);
  CHECK_FALSE(v->fecn());
  CHECK_FALSE(v->becn());
  CHECK(v->dest_qp() == 0x10a);
  CHECK(v->ack_req());
  CHECK(v->psn() == 0xa788bc);
  const Bth b = Bth::parse(*v);
  CHECK(b == Bth{RC_RDMA_WRITE_ONLY, false, true, 3, 0, 0xffff, false, false, 0x10a, true, 0xa788bc});
  std::vector<std::byte> out(12, std::byte{0xEE});
  b.emit(*BthView::check(out));
  CHECK(out == kBth);
}

TEST_CASE("bth: every field at its extreme, reserved bits written as zero") {
  const Bth b{UD_SEND_ONLY_IMM, true, false, 2, 0xF, 0x8001, true, true, 0xFFFFFF, false, 0xFFFFFF};
  std::vector<std::byte> out(12, std::byte{0xFF});
  b.emit(*BthView::check(out));
  CHECK(out == hex("65 af 80 01 c0 ff ff ff 00 ff ff ff"));
  CHECK(Bth::parse(*ConstBthView::check(out)) == b);
}

TEST_CASE("bth: setters change one field each") {
  auto b = kBth;
  auto v = *BthView::check(b);
  v.set_becn(true);
  CHECK(b == hex("0a 70 ff ff 40 00 01 0a 80 a7 88 bc"));
  v.set_fecn(true);
  v.set_becn(false);
  CHECK(b[4] == std::byte{0x80});
  v.set_solicited(true);
  v.set_pad_count(0);
  CHECK(b[1] == std::byte{0xc0});
  v.set_psn(0x000001);
  v.set_dest_qp(0xabcdef);
  v.set_ack_req(false);
  CHECK(b == hex("0a c0 ff ff 80 ab cd ef 00 00 00 01"));
  CHECK_FALSE(BthView::check(std::span<std::byte>(b).first(11)));
  CHECK(v.payload().empty());
}

TEST_CASE("bth: pad count brings the payload to a multiple of four") {
  CHECK(iba_pad_count(0) == 0);
  CHECK(iba_pad_count(1) == 3);
  CHECK(iba_pad_count(5) == 3);
  CHECK(iba_pad_count(6) == 2);
  CHECK(iba_pad_count(4096) == 0);
}

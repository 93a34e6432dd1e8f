#include "fabrics/ethernet/wire/pfc.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;
using rdmasim::test::hex;

TEST_CASE("pfc: MAC control payload from hand-written bytes") {
  // Opcode 0x0101, classes 3 and 7 enabled, class 3 paused 0xffff quanta,
  // class 7 resumed (0), the others zero.
  auto b = hex("01 01 00 88  00 00 00 00 00 00 ff ff 00 00 00 00 00 00 00 00");
  const auto v = ConstPfcView::check(b);
  REQUIRE(v);
  CHECK(v->valid());
  CHECK(v->class_enable() == 0x88);
  CHECK(v->enabled(3));
  CHECK(v->enabled(7));
  CHECK_FALSE(v->enabled(0));
  CHECK(v->quanta(3) == 0xffff);
  CHECK(v->quanta(7) == 0);
  PfcFrame f = PfcFrame::parse(*v);
  CHECK(f.class_enable == 0x88);
  CHECK(f.quanta[3] == 0xffff);
  std::vector<std::byte> out(20, std::byte{0xEE});
  f.emit(*PfcView::check(out));
  CHECK(out == b);
  CHECK_FALSE(PfcView::check(std::span<std::byte>(out).first(19)));
}

TEST_CASE("pfc: the whole frame is 60 bytes to 01:80:c2:00:00:01") {
  PfcFrame f;
  f.class_enable = 1 << 3;
  f.quanta[3] = 0x1234;
  std::vector<std::byte> frame(kPfcFrameLen, std::byte{0xEE});
  f.emit_frame(frame, MacAddress::local(5));
  auto want =
      hex("01 80 c2 00 00 01  02 00 00 00 00 05  88 08"
          "01 01 00 08  00 00 00 00 00 00 12 34 00 00 00 00 00 00 00 00");
  want.resize(60);  // zero padding
  CHECK(frame == want);
}

TEST_CASE("pfc: pause quanta are 512 bit times") {
  CHECK(pfc_quanta_to_time(1, 100_Gbps) == Time::ps(5120));
  CHECK(pfc_quanta_to_time(0xFFFF, 100_Gbps) == Time::ps(5120) * 0xFFFF);
  CHECK(pfc_quanta_to_time(1, 25_Gbps) == 20480_ps);
  CHECK(pfc_time_to_quanta(5120_ps, 100_Gbps) == 1);
  CHECK(pfc_time_to_quanta(5121_ps, 100_Gbps) == 2);
  CHECK(pfc_time_to_quanta(0_ps, 100_Gbps) == 0);
  CHECK(pfc_time_to_quanta(1_s, 100_Gbps) == 0xFFFF);
}

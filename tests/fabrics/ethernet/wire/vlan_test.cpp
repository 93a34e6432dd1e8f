#include "fabrics/ethernet/wire/vlan.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("vlan: TCI fields from hand-written bytes") {
  // PCP 3, DEI 0, VID 100 (0x064): 0110 0000 0110 0100; then IPv4.
  auto b = hex("60 64 08 00");
  const auto v = ConstVlanView::check(b);
  REQUIRE(v);
  CHECK(v->pcp() == 3);
  CHECK_FALSE(v->dei());
  CHECK(v->vid() == 100);
  CHECK(v->ethertype() == ethertype::kIpv4);
  CHECK(VlanTag::parse(*v) == VlanTag{3, false, 100, 0x0800});
  std::vector<std::byte> out(4);
  VlanTag{3, false, 100, 0x0800}.emit(*VlanView::check(out));
  CHECK(out == b);
}

TEST_CASE("vlan: extremes do not spill into neighbours") {
  std::vector<std::byte> out(4);
  VlanTag{7, true, 0xFFF, 0x8915}.emit(*VlanView::check(out));
  CHECK(out == hex("ff ff 89 15"));
  auto v = *VlanView::check(out);
  v.set_pcp(0);
  CHECK(out == hex("1f ff 89 15"));
  VlanTag{0, false, 0x1FFF, 0}.emit(v);  // VID is 12 bits
  CHECK(v.vid() == 0xFFF);
  CHECK(v.pcp() == 0);
  CHECK_FALSE(v.dei());
  CHECK_FALSE(VlanView::check(std::span<std::byte>(out).first(3)));
}

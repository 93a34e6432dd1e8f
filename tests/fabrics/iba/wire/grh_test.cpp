#include "fabrics/iba/wire/grh.hpp"

#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {
// The GRH of a ConnectX RoCE v1 RDMA WRITE ONLY (Scapy test/contrib/roce.uts):
// TClass 2, flow label 0, PayLen 40, NxtHdr 0x1b, HopLmt 64, both GIDs
// ::ffff:15.0.0.2.
const auto kGrh =
    hex("60 20 00 00 00 28 1b 40"
        "00 00 00 00 00 00 00 00 00 00 ff ff 0f 00 00 02"
        "00 00 00 00 00 00 00 00 00 00 ff ff 0f 00 00 02");
}  // namespace

TEST_CASE("grh: fields of a captured RoCE v1 GRH") {
  const auto v = ConstGrhView::check(kGrh);
  REQUIRE(v);
  CHECK(v->ip_ver() == 6);
  CHECK(v->tclass() == 2);
  CHECK(v->flow_label() == 0);
  CHECK(v->pay_len() == 40);
  CHECK(v->next_header() == kGrhNextHeaderIba);
  CHECK(v->hop_limit() == 64);
  CHECK(v->sgid().to_string() == "::ffff:15.0.0.2");
  CHECK(v->dgid() == Gid::v4_mapped(Ipv4Address{{15, 0, 0, 2}}));
  const Grh g = Grh::parse(*v);
  std::vector<std::byte> out(40, std::byte{0xEE});
  g.emit(*GrhView::check(out));
  CHECK(out == kGrh);
  CHECK_FALSE(GrhView::check(std::span<std::byte>(out).first(39)));
}

TEST_CASE("grh: traffic class and flow label do not overlap") {
  Grh g;
  g.tclass = 0xAB;
  g.flow_label = 0xCDEF1;
  g.sgid = make_gid(kDefaultGidPrefix, 0x0002c90300a1b2c3);
  g.dgid = make_gid(kDefaultGidPrefix, 1);
  std::vector<std::byte> out(40);
  g.emit(*GrhView::check(out));
  CHECK(std::vector<std::byte>(out.begin(), out.begin() + 8) == hex("6a bc de f1 00 00 1b 40"));
  CHECK(g.sgid.to_string() == "fe80::2:c903:a1:b2c3");
  CHECK(Grh::parse(*ConstGrhView::check(out)) == g);
}

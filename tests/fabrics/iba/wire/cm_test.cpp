// CM MADs (IBA 12.6) at the offsets Wireshark's InfiniBand dissector reads.
#include "fabrics/iba/wire/cm.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

TEST_CASE("cm: MAD header of a CM REQ") {
  const auto bytes = hex("01 07 02 03  00 00 00 00  00 00 00 01 00 00 00 2a  00 10 00 00  00 00 00 00");
  const auto h = MadHeader::parse(bytes);
  REQUIRE(h);
  CHECK(h->mgmt_class == kMgmtClassCm);
  CHECK(h->transaction_id == 0x10000002a);
  CHECK(h->attribute_id == static_cast<uint16_t>(CmAttribute::req));
  std::vector<std::byte> out(24, std::byte{0xEE});
  h->emit(out);
  CHECK(out == bytes);
}

TEST_CASE("cm: REQ fields at their offsets, private data at 140") {
  CmReq r;
  r.local_comm_id = 0x11223344;
  r.service_id = ip_cm_service_id(4420);
  r.local_qpn = 0xABCDEF;
  r.responder_resources = 16;
  r.starting_psn = 0x123456;
  r.path_mtu = 5;
  r.primary.local_lid = 0xFFFF;
  r.primary.local_gid[15] = 7;
  r.private_data[0] = 0x5A;
  std::vector<std::byte> d(kMadDataLen);
  r.emit(d);
  CHECK(load_be64(std::span(d).subspan(8, 8)) == 0x0000000001061144);
  CHECK(load_be24(std::span(d).subspan(32, 3)) == 0xABCDEF);
  CHECK(u8(d[35]) == 16);
  CHECK(u8(d[43]) == (20 << 3 | 1));  // remote CM response timeout 20, RC, E2E flow control
  CHECK(load_be24(std::span(d).subspan(44, 3)) == 0x123456);
  CHECK((u8(d[50]) >> 4) == 5);
  CHECK(load_be16(std::span(d).subspan(52, 2)) == 0xFFFF);
  CHECK(u8(d[56 + 15]) == 7);
  CHECK(u8(d[140]) == 0x5A);
  CHECK(*CmReq::parse(d) == r);
}

TEST_CASE("cm: REP and RTU round trip; the IP CM header puts IPv4 in the last 4 bytes") {
  CmRep rep;
  rep.local_comm_id = 1;
  rep.remote_comm_id = 2;
  rep.local_qpn = 0x12;
  rep.starting_psn = 0x345;
  rep.private_data[0] = 9;
  std::vector<std::byte> d(kMadDataLen);
  rep.emit(d);
  CHECK(load_be24(std::span(d).subspan(12, 3)) == 0x12);
  CHECK(u8(d[36]) == 9);
  CHECK(*CmRep::parse(d) == rep);
  CmRtu rtu{3, 4};
  rtu.emit(d);
  CHECK(*CmRtu::parse(d) == rtu);
  IpCmHeader ip;
  ip.source_port = 0x1234;
  ip.source_ip[15] = 1;
  ip.destination_ip[12] = 10;
  std::vector<std::byte> p(kIpCmHeaderLen);
  ip.emit(p);
  CHECK(p == hex("00 40 12 34  00000000 00000000 00000000 00000001  00000000 00000000 00000000 0a000000"));
  CHECK(*IpCmHeader::parse(p) == ip);
}

TEST_CASE(
    "cm: DREQ and DREP (IBA 12.6.10, 12.6.11): the IDs, the DREQ's remote QPN at 8, zero private data") {
  CmDreq dreq{0x00100002, 0x00200003, 0x000011};
  std::vector<std::byte> d(kMadDataLen, std::byte{0xEE});
  dreq.emit(d);
  CHECK(std::vector<std::byte>(d.begin(), d.begin() + 12) == hex("00 10 00 02  00 20 00 03  00 00 11 00"));
  CHECK(std::all_of(d.begin() + 12, d.end(), [](std::byte b) { return b == std::byte{0}; }));
  CHECK(d.size() - 12 == kCmDreqPrivateLen);
  CHECK(*CmDreq::parse(d) == dreq);
  CmDrep drep{0x00200003, 0x00100002};
  std::fill(d.begin(), d.end(), std::byte{0xEE});
  drep.emit(d);
  CHECK(std::vector<std::byte>(d.begin(), d.begin() + 8) == hex("00 20 00 03  00 10 00 02"));
  CHECK(std::all_of(d.begin() + 8, d.end(), [](std::byte b) { return b == std::byte{0}; }));
  CHECK(d.size() - 8 == kCmDrepPrivateLen);
  CHECK(*CmDrep::parse(d) == drep);
  CHECK(static_cast<uint16_t>(CmAttribute::dreq) == 0x0015);
  CHECK(static_cast<uint16_t>(CmAttribute::drep) == 0x0016);
  CHECK_FALSE(CmDreq::parse(std::span(d).first(100)));
}

// NVMe and NVMe-oF structures against bytes written out by hand from the
// specifications (little-endian throughout).
#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"
#include "workloads/nvme/block_pattern.hpp"
#include "workloads/nvme/wire/cm_private.hpp"
#include "workloads/nvme/wire/command.hpp"
#include "workloads/nvme/wire/completion.hpp"
#include "workloads/nvme/wire/connect_data.hpp"
#include "workloads/nvme/wire/tcp_pdu.hpp"

using namespace rdmasim;
using namespace rdmasim::nvme;
using rdmasim::test::hex;

TEST_CASE("nvme wire: a Read with a keyed SGL") {
  const auto bytes =
      hex("02 40 07 00  01 00 00 00  00 00 00 00 00 00 00 00"   // OPC, PSDT 01b, CID 7, NSID 1
          "00 00 00 00 00 00 00 00"                             // MPTR
          "00 10 20 30 40 50 00 00  00 10 00  78 56 34 12  40"  // keyed SGL: VA, 4096, key 0x12345678, type 4
          "10 00 00 00  00 00 00 00  07 00 00 00  00 00 00 00"  // SLBA 16, NLB 7 (8 blocks)
          "00 00 00 00  00 00 00 00");
  const auto c = Command::parse(bytes);
  REQUIRE(c);
  CHECK(c->opcode == Opcode::read);
  CHECK(c->cid == 7);
  CHECK(c->nsid == 1);
  CHECK(c->slba() == 16);
  CHECK(c->nlb() == 8);
  CHECK(c->sgl == Sgl::keyed_block(0x504030201000, 4096, 0x12345678));
  std::vector<std::byte> out(64, std::byte{0xEE});
  Command::io(Opcode::read, 7, 1, 16, 8, Sgl::keyed_block(0x504030201000, 4096, 0x12345678)).emit(out);
  CHECK(out == bytes);
}

TEST_CASE("nvme wire: a Fabrics Connect with in-capsule data") {
  const auto bytes =
      hex("7f 40 00 00  01 00 00 00  00 00 00 00 00 00 00 00"  // OPC 0x7F, CID 0, FCTYPE Connect
          "00 00 00 00 00 00 00 00"
          "00 00 00 00 00 00 00 00  00 04 00 00  00 00 00  01"  // SGL data block, offset 0, 1024 bytes
          "00 00 03 00  7f 00 00 00  00 00 00 00  00 00 00 00"  // RECFMT 0, QID 3, SQSIZE 127
          "00 00 00 00  00 00 00 00");
  const auto c = Command::parse(bytes);
  REQUIRE(c);
  CHECK(c->is_fabrics());
  CHECK(c->fctype == FabricsType::connect);
  CHECK(c->qid() == 3);
  CHECK(c->sqsize() == 127);
  CHECK_FALSE(c->sgl.keyed);
  CHECK(c->sgl.length == 1024);
  std::vector<std::byte> out(64);
  Command::connect(0, 3, 127, 0, Sgl::in_capsule(1024)).emit(out);
  CHECK(out == bytes);
}

TEST_CASE("nvme wire: Keep Alive (admin opcode 0x18): no NSID, no data, no CDWs") {
  const auto bytes =
      hex("18 40 01 00  00 00 00 00  00 00 00 00 00 00 00 00"   // OPC 0x18, PSDT 01b, CID 1, NSID 0
          "00 00 00 00 00 00 00 00"                             // MPTR
          "00 00 00 00 00 00 00 00  00 00 00  00 00 00 00  40"  // a null keyed SGL (nvme_rdma_set_sg_null)
          "00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00"  // CDW10..15: none
          "00 00 00 00  00 00 00 00");
  Command ka = Command::keep_alive(1);
  ka.sgl = Sgl::keyed_block(0, 0, 0);
  std::vector<std::byte> out(64, std::byte{0xEE});
  ka.emit(out);
  CHECK(out == bytes);
  const auto c = Command::parse(bytes);
  REQUIRE(c);
  CHECK(c->opcode == Opcode::keep_alive);
  CHECK(*c == ka);
}

TEST_CASE("nvme wire: the admin Connect's KATO in ms at byte 48") {
  std::vector<std::byte> out(64);
  Command::connect(0, 0, 31, 5000, Sgl::keyed_block(0, 1024, 1)).emit(out);
  CHECK(std::vector<std::byte>(out.begin() + 48, out.begin() + 52) == hex("88 13 00 00"));
  CHECK(Command::parse(out)->kato() == 5000);
}

TEST_CASE("nvme wire: a completion with an error status") {
  const auto bytes = hex("01 00 00 00  00 00 00 00  05 00 02 00  2a 00 00 81");
  const auto c = Completion::parse(bytes);
  REQUIRE(c);
  CHECK(c->dw0 == 1);
  CHECK(c->sqhd == 5);
  CHECK(c->sqid == 2);
  CHECK(c->cid == 42);
  CHECK(c->sc == 0x80);  // LBA out of range
  CHECK(c->dnr);
  CHECK_FALSE(c->ok());
  std::vector<std::byte> out(16);
  c->emit(out);
  CHECK(out == bytes);
}

TEST_CASE("nvme wire: RDMA CM private data of NVMe-oF") {
  const auto req = hex("00 00 02 00  80 00 7f 00  01 00" + std::string(44, '0'));
  const auto r = CmRequest::parse(req);
  REQUIRE(r);
  CHECK(*r == CmRequest{0, 2, 128, 127, 1});
  std::vector<std::byte> out(32, std::byte{0xEE});
  r->emit(out);
  CHECK(out == req);
  const auto rep = hex("00 00 80 00" + std::string(56, '0'));
  CHECK(*CmAccept::parse(rep) == CmAccept{0, 128});
}

TEST_CASE("nvme wire: Connect data") {
  ConnectData d;
  d.hostid[0] = 0xAB;
  d.cntlid = 0x0102;
  d.subnqn = "nqn.x:sub";
  d.hostnqn = "nqn.x:host";
  std::vector<std::byte> b(kConnectDataLen, std::byte{0xEE});
  d.emit(b);
  CHECK(b[0] == std::byte{0xAB});
  CHECK(b[16] == std::byte{0x02});
  CHECK(b[17] == std::byte{0x01});
  CHECK(b[256] == std::byte{'n'});
  CHECK(b[256 + 9] == std::byte{0});
  CHECK(b[1000] == std::byte{0});
  CHECK(*ConnectData::parse(b) == d);
}

TEST_CASE("nvme block pattern: a block names its LBA and generation; a flipped byte is caught") {
  std::vector<std::byte> b(512);
  fill_block(b, {1234, 3, 1});
  const auto s = read_block(b);
  REQUIRE(s);
  CHECK(*s == BlockStamp{1234, 3, 1});
  b[300] ^= std::byte{1};
  CHECK_FALSE(read_block(b));
}

TEST_CASE("nvme wire: Property Set of CC (offset at byte 44, value at 48)") {
  const auto bytes =
      hex("7f 40 05 00  00 00 00 00  00 00 00 00 00 00 00 00"
          "00 00 00 00 00 00 00 00"
          "00 00 00 00 00 00 00 00  00 00 00  00 00 00 00  40"
          "00 00 00 00  14 00 00 00  01 00 46 00  00 00 00 00"
          "00 00 00 00  00 00 00 00");
  std::vector<std::byte> out(64);
  Command::property_set(5, kPropCc, 0x00460001, false).emit(out);
  CHECK(out == bytes);
  const auto c = Command::parse(bytes);
  REQUIRE(c);
  CHECK(c->fctype == FabricsType::property_set);
  CHECK(c->property_offset() == kPropCc);
  CHECK(c->property_value() == 0x00460001);
}

TEST_CASE("nvme wire: a transport SGL data block (NVMe/TCP)") {
  const auto bytes =
      hex("00 00 00 00 00 00 00 00  00 20 00 00  00 00 00  5a");  // 8192 bytes, type 5, subtype A
  const auto s = Sgl::parse(*ConstSglView::check(bytes));
  REQUIRE(s);
  CHECK(s->transport);
  CHECK_FALSE(s->in_capsule());
  CHECK(*s == Sgl::transport_block(8192));
  std::vector<std::byte> out(16, std::byte{0xEE});
  Sgl::transport_block(8192).emit(*SglView::check(out));
  CHECK(out == bytes);
}

TEST_CASE("nvme/tcp wire: ICReq and ICResp") {
  using namespace rdmasim::nvme::tcp;
  auto req =
      hex("00 00 80 00  80 00 00 00  00 00 00 03  00 00 00 00");  // ICReq, HLEN 128, PLEN 128, both digests
  req.resize(kIcLen);
  const auto ch = Ch::parse(req);
  REQUIRE(ch);
  CHECK(ch->type == PduType::ic_req);
  const auto ic = Ic::parse(*ch, req);
  REQUIRE(ic);
  CHECK(ic->request);
  CHECK(ic->digests == (kDgstHeader | kDgstData));
  std::vector<std::byte> out(kIcLen, std::byte{0xEE});
  Ic{true, kDgstHeader | kDgstData, 0, 0, 0}.emit(out);
  CHECK(out == req);
  auto resp = hex("01 00 80 00  80 00 00 00  00 00 00 00  00 00 40 00");  // ICResp, MAXH2CDATA 4 MiB
  resp.resize(kIcLen);
  Ic{false, 0, 0x400000, 0, 0}.emit(out);
  CHECK(out == resp);
  CHECK(Ic::parse(*Ch::parse(resp), resp)->limit == 0x400000);
}

TEST_CASE("nvme/tcp wire: a CapsuleResp with its header digest") {
  using namespace rdmasim::nvme::tcp;
  // CH: CapsuleResp, HDGSTF, HLEN 24, PDO 0, PLEN 28; the CQE (SQHD 1, SQID 1, CID 7); CRC32C LSB first.
  const auto bytes =
      hex("05 01 18 00  1c 00 00 00"
          "00 00 00 00  00 00 00 00  01 00 01 00  07 00 00 00"
          "6f bc 0f 36");
  const Ch ch = pdu_header(PduType::capsule_resp, 0, kRespHlen, 0, kDgstHeader | kDgstData);
  CHECK(ch == *Ch::parse(bytes));
  CHECK(ch.data_len() == 0);
  std::vector<std::byte> out(ch.plen);
  ch.emit(out);
  Completion{0, 0, 1, 1, 7}.emit(std::span(out).subspan(kChLen, kCqeLen));
  seal_digests(out);
  CHECK(out == bytes);
  CHECK(digests_ok(out));
  out[12] = std::byte{1};
  CHECK_FALSE(digests_ok(out));
}

TEST_CASE("nvme/tcp wire: C2HData with both digests, R2T") {
  using namespace rdmasim::nvme::tcp;
  const Ch ch = pdu_header(PduType::c2h_data, kFlagLast, kDataHlen, 8, kDgstHeader | kDgstData);
  CHECK(ch.flags == (kFlagLast | kFlagHdgst | kFlagDdgst));
  CHECK(ch.pdo == 28);
  CHECK(ch.plen == 24 + 4 + 8 + 4);
  CHECK(ch.data_offset() == 28);
  CHECK(ch.data_len() == 8);
  std::vector<std::byte> pdu(ch.plen);
  ch.emit(pdu);
  DataHeader{3, 0, 4096, 8}.emit(pdu);
  const auto data = hex("31 32 33 34 35 36 37 38");
  std::copy(data.begin(), data.end(), pdu.begin() + 28);
  seal_digests(pdu);
  CHECK(std::vector<std::byte>(pdu.begin() + 8, pdu.begin() + 24) ==
        hex("03 00 00 00  00 10 00 00  08 00 00 00  00 00 00 00"));  // CCCID 3, DATAO 4096, DATAL 8
  CHECK(std::vector<std::byte>(pdu.end() - 4, pdu.end()) ==
        hex("9a 80 87 60"));  // CRC32C("12345678") = 0x6087809a, LSB first
  CHECK(DataHeader::parse(pdu) == DataHeader{3, 0, 4096, 8});
  const Ch r2t = pdu_header(PduType::r2t, 0, kDataHlen, 0, 0);
  CHECK(r2t.plen == 24);
  CHECK(r2t.pdo == 0);
  CHECK(r2t.flags == 0);
}

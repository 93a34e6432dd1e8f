// NVMe and NVMe-oF structures against bytes written out by hand from the
// specifications (little-endian throughout).
#include <doctest/doctest.h>

#include "tests/fabrics/wire_bytes.hpp"
#include "workloads/nvme/block_pattern.hpp"
#include "workloads/nvme/wire/cm_private.hpp"
#include "workloads/nvme/wire/command.hpp"
#include "workloads/nvme/wire/completion.hpp"
#include "workloads/nvme/wire/connect_data.hpp"

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

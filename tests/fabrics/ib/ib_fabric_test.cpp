#include "fabrics/ib/ib_fabric.hpp"

#include <doctest/doctest.h>

#include <cstring>

#include "fabrics/ib/subnet_manager.hpp"
#include "fabrics/iba/wire/bth.hpp"
#include "fabrics/iba/wire/grh.hpp"
#include "nodes/host/host.hpp"
#include "tests/fabrics/ib/ib_test_util.hpp"
#include "tests/fabrics/wire_bytes.hpp"

using namespace rdmasim;
using rdmasim::test::hex;

namespace {

struct Hca {
  Simulator sim;
  PacketPool pool;
  Host host{sim, pool, "h", NicConfig{}, HostConfig{}};
  IbFabric* fabric;
  explicit Hca(uint16_t lid) {
    auto f = std::make_unique<IbFabric>(host.nic(), SlToVl::modulo(2));
    fabric = f.get();
    host.nic().set_fabric(std::move(f));
    host.nic().set_lid(lid);
    host.nic().set_gid(ib_gid(ib_port_guid(lid - 1)));
  }
  // Transport headers and payload as the IBA transport hands them over.
  Packet transport(uint8_t opcode, size_t payload) {
    Packet p = pool.make(fabric->headroom() + 64);
    for (size_t i = 0; i < payload; ++i) p.push_back(1)[0] = std::byte(i * 7 + 1);
    IbaHeaders h;
    h.opcode = opcode;
    h.dest_qp = 0xABCDE;
    h.psn = 0x123456;
    h.qkey = 0x11111111;
    h.src_qp = 0x77;
    REQUIRE(iba_emit(p, h));
    return p;
  }
};

std::vector<std::byte> bytes_of(const Packet& p) { return {p.bytes().begin(), p.bytes().end()}; }
std::vector<std::byte> gid_bytes(const ibv_gid& g) {
  std::vector<std::byte> v(16);
  std::memcpy(v.data(), g.raw, 16);
  return v;
}

}  // namespace

TEST_CASE("ib fabric: a local packet is LRH, transport, ICRC, VCRC with the SM's LIDs") {
  Hca hca(5);
  Packet p = hca.transport(RC_SEND_ONLY, 13);  // 13 bytes + 3 of pad
  const auto transport = bytes_of(p);
  ibv_ah_attr ah{};
  ah.dlid = 9;
  ah.sl = 3;
  hca.fabric->encap(p, ah, 0x77, 0xABCDE);
  REQUIRE(p.size() == 8 + 12 + 16 + 4 + 2);
  CHECK(p.meta().crc_pending);
  CHECK(p.meta().priority == 3);
  CHECK(p.meta().vl == 1);  // SL 3 on 2 data VLs: VL 1
  // VL 1, LVer 0 | SL 3, LNH 2 (IBA local) | DLID 9 | PktLen 10 words (LRH..ICRC = 40 bytes) | SLID 5
  CHECK(std::vector<std::byte>(p.bytes().begin(), p.bytes().begin() + 8) == hex("10 32 00 09 00 0a 00 05"));
  CHECK(std::vector<std::byte>(p.bytes().begin() + 8, p.bytes().end() - 6) == transport);
  CHECK(test::carried_icrc(p.bytes()) == 0);  // placeholders until sealed

  seal_ib(p);
  CHECK_FALSE(p.meta().crc_pending);
  CHECK(test::carried_icrc(p.bytes()) == test::ref_ib_icrc(p.bytes()));
  CHECK(test::carried_vcrc(p.bytes()) == test::bit_crc16_iba(p.bytes().first(p.size() - 2)));
  const auto sealed = bytes_of(p);
  seal_ib(p);  // sealing twice changes nothing
  CHECK(bytes_of(p) == sealed);

  SUBCASE("the receiver strips it back to the transport") {
    Hca rx(9);
    IbaSource src;
    REQUIRE(rx.fabric->decap(p, src));
    CHECK(bytes_of(p) == transport);
    CHECK(src.slid == 5);
  }
  SUBCASE("another LID's packet is not taken") {
    Hca rx(10);
    IbaSource src;
    CHECK_FALSE(rx.fabric->decap(p, src));
    CHECK(rx.fabric->ib_stats().wrong_dlid == 1);
  }
  SUBCASE("PktLen must match the frame") {
    Hca rx(9);
    p.push_back(4);
    IbaSource src;
    CHECK_FALSE(rx.fabric->decap(p, src));
    CHECK(rx.fabric->ib_stats().bad_header == 1);
  }
  SUBCASE("a raw packet (LNH 0) is not for a QP") {
    Hca rx(9);
    p.bytes()[1] &= std::byte{0xFC};
    IbaSource src;
    CHECK_FALSE(rx.fabric->decap(p, src));
  }
}

TEST_CASE("ib fabric: an address handle with is_global adds a GRH (LNH 3)") {
  Hca hca(2);
  Packet p = hca.transport(UD_SEND_ONLY, 100);
  const auto transport = bytes_of(p);
  ibv_ah_attr ah{};
  ah.dlid = 1;
  ah.sl = 0;
  ah.src_path_bits = 0;
  ah.is_global = 1;
  ah.grh.dgid = ib_gid(ib_port_guid(0));
  ah.grh.flow_label = 0x12345;
  ah.grh.traffic_class = 0xA0;
  ah.grh.hop_limit = 3;
  hca.fabric->encap(p, ah, 0x77, 0xABCDE);
  REQUIRE(p.size() == 8 + 40 + transport.size() + 6);
  auto lrh = ConstLrhView::check(std::as_const(p).bytes());
  CHECK(lrh->lnh() == Lnh::IbaGlobal);
  CHECK(size_t{lrh->pkt_len()} * 4 == p.size() - 2);
  auto grh = ConstGrhView::check(lrh->payload());
  CHECK(grh->ip_ver() == 6);
  CHECK(grh->tclass() == 0xA0);
  CHECK(grh->flow_label() == 0x12345);
  CHECK(grh->pay_len() == transport.size() + 4);  // BTH through ICRC (IBA 8.3.1)
  CHECK(grh->next_header() == 0x1B);
  CHECK(grh->hop_limit() == 3);
  // fe80::/64 and the port GUID 02:00:00:00:00:00:00:02 (LID 2's).
  CHECK(std::vector<std::byte>(p.bytes().begin() + 16, p.bytes().begin() + 32) ==
        hex("fe80 0000 0000 0000 0200 0000 0000 0002"));
  CHECK(std::vector<std::byte>(p.bytes().begin() + 32, p.bytes().begin() + 48) == gid_bytes(ah.grh.dgid));

  seal_ib(p);
  CHECK(test::ib_crcs_ok(p.bytes()));
  // The whole LRH is variant once a GRH is there: a router could rewrite it.
  auto moved = bytes_of(p);
  moved[2] = std::byte{0x77};  // DLID
  moved[6] = std::byte{0x66};  // SLID
  CHECK(test::ref_ib_icrc(moved) == test::carried_icrc(moved));

  Hca rx(1);
  IbaSource src;
  REQUIRE(rx.fabric->decap(p, src));
  CHECK(bytes_of(p) == transport);
  CHECK(src.slid == 2);
  CHECK(std::vector<std::byte>(reinterpret_cast<const std::byte*>(src.sgid.data()),
                               reinterpret_cast<const std::byte*>(src.sgid.data()) + 16) ==
        gid_bytes(hca.host.nic().gid()));
}

TEST_CASE("ib fabric: the largest packet of each MTU fits the packet buffers") {
  for (uint32_t mtu : {256u, 512u, 1024u, 2048u, 4096u}) {
    CHECK(ib_max_packet(mtu) == mtu + 94);
    CHECK(ib_max_packet(mtu) + 128 <= PacketPool::kMaxCapacity);
  }
}

TEST_CASE("ib fabric: GIDs are the default subnet prefix and the port GUID") {
  const ibv_gid g = ib_gid(ib_port_guid(41));
  CHECK(gid_bytes(g) == hex("fe80 0000 0000 0000 0200 0000 0000 002a"));
  CHECK(ib_port_guid(0) != ib_port_guid(1));
}

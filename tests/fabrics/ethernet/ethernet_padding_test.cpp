// Ethernet's minimum frame (IEEE 802.3 4.2.3.3, 3.2.8): every Ethernet
// fabric's links pad a frame shorter than 60 bytes (the 64-byte minimum less
// the FCS, which captures leave out) with zeros behind its datagram, so the
// IP total length, the UDP length, the ICRC and the TCP checksum stay the
// datagram's; the receivers take the datagram by its own length (IP, UDP,
// the GRH's PayLen), not the frame's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/headers.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/ip/wire/udp.hpp"
#include "fabrics/roce_v1/roce_v1_fabric.hpp"
#include "fabrics/roce_v2/roce_v2_fabric.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "tests/fixtures/iba_request.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;

namespace {

constexpr size_t kMinFrame = EthernetView::kMinFrameLen;

// What host a's port puts on the wire when it sends `p`, sealed as a
// capture seals it.
std::vector<std::byte> sent(Host& a, Packet p) {
  auto seen = std::make_shared<std::vector<std::byte>>();
  a.nic().port().on_tx([&a, seen](Time, Packet& f) {
    a.nic().fabric().seal(f);
    seen->assign(f.bytes().begin(), f.bytes().end());
  });
  REQUIRE(a.nic().port().send(std::move(p)));  // an idle port: it starts at once
  return *seen;
}

bool zeros(std::span<const std::byte> b) {
  return std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; });
}

}  // namespace

TEST_CASE("ethernet padding: every Ethernet fabric's links pad to 60 bytes, ib's do not") {
  for (const Fabric* f : fabrics()) {
    CAPTURE(f->name());
    test::BuiltNetwork n(test::two_hosts(std::string(f->name())));
    const uint32_t want = f->name() == "ib" ? 0 : kMinFrame;
    CHECK(f->min_frame() == want);
    for (const auto& link : n.net.links) {
      CHECK(link.a->params().min_frame == want);
      CHECK(link.b->params().min_frame == want);
    }
  }
}

TEST_CASE(
    "ethernet padding: a zero-length RoCE v2 SEND leaves as 60 bytes, its datagram and ICRC unchanged") {
  test::BuiltNetwork n(test::two_hosts("roce_v2"));
  Host &a = n.host(0), &b = n.host(1);
  auto& fa = static_cast<RoceV2Fabric&>(a.nic().fabric());
  Packet p = test::rc_send_only(a.nic(), "");
  fa.encap(p, n.fabric.address(a, b), 0x42, 0x123);
  REQUIRE(p.size() == 58);  // Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4
  Packet unpadded = p.clone();
  fa.seal(unpadded);
  const auto want = std::as_const(unpadded).bytes();

  const std::vector<std::byte> wire = sent(a, std::move(p));
  REQUIRE(wire.size() == kMinFrame);
  CHECK(std::equal(want.begin(), want.end(), wire.begin()));  // IP and UDP lengths, ICRC as they were
  CHECK(zeros(std::span(wire).subspan(58)));
  auto ip = ConstIpv4View::check(ConstEthernetView::check(wire)->payload());
  CHECK(ip->total_length() == 44);
  CHECK(ConstUdpView::check(ip->payload())->length() == 24);

  // The receiver takes the transport by the UDP length: the BTH, no pad.
  Packet q = n.net.pool.make_copy(wire);
  IbaSource src;
  REQUIRE(static_cast<RoceV2Fabric&>(b.nic().fabric()).decap(q, src));
  auto h = iba_parse(std::as_const(q).raw_bytes());
  REQUIRE(h);
  CHECK(h->h.opcode == RC_SEND_ONLY);
  CHECK(h->payload_len == 0);
  CHECK(q.size() == 12);
}

TEST_CASE(
    "ethernet padding: RoCE v1 frames are never short, and one with bytes behind its ICRC still parses") {
  test::BuiltNetwork n(test::two_hosts("roce_v1"));
  Host &a = n.host(0), &b = n.host(1);
  // Ethernet 14, GRH 40, BTH 12, ICRC 4: 70 bytes, the least RoCE v1 frame.
  Packet p = test::rc_send_only(a.nic(), "");
  std::memset(p.push_back(kIcrcLen).data(), 0, kIcrcLen);
  Grh grh;
  grh.pay_len = static_cast<uint16_t>(p.size());
  grh.hop_limit = 64;
  grh.sgid = from_ibv_gid(a.nic().gid());
  grh.dgid = from_ibv_gid(b.nic().gid());
  grh.emit(*GrhView::check(p.push_front(Grh::kLen)));
  EthernetHeader{MacAddress::local(2), MacAddress::local(1), ethertype::kRoce}.emit(
      *EthernetView::check(p.push_front(EthernetHeader::kLen)));
  REQUIRE(p.size() == 70);
  // Wireshark dissects RoCE v1 by the GRH's PayLen; so does the receiver.
  std::memset(p.push_back(8).data(), 0, 8);
  IbaSource src;
  REQUIRE(static_cast<RoceV1Fabric&>(b.nic().fabric()).decap(p, src));
  auto h = iba_parse(std::as_const(p).raw_bytes());
  REQUIRE(h);
  CHECK(h->h.opcode == RC_SEND_ONLY);
  CHECK(h->payload_len == 0);
  CHECK(p.size() == 12);
}

TEST_CASE("ethernet padding: a kernel TCP ACK leaves as 60 bytes, its checksum over the segment alone") {
  test::BuiltNetwork n(test::two_hosts("tcp"));
  Host& a = n.host(0);
  // A bare ACK, 14 + 20 + 20 = 54 bytes, as the kernel's IP layer builds it.
  Packet p = a.nic().alloc(0);
  TcpHeader t;
  t.src_port = 49152;
  t.dst_port = 5201;
  t.seq = 1000;
  t.ack = 5001;
  t.flags = tcp_flag::kAck;
  t.window = 512;
  t.emit(*TcpView::check(p.push_front(t.header_len())));
  Ipv4Header ih;
  ih.total_length = static_cast<uint16_t>(Ipv4Header::kLen + p.size());
  ih.protocol = kIpProtoTcp;
  ih.src = host_endpoint(0).ipv4;
  ih.dst = host_endpoint(1).ipv4;
  ih.emit(*Ipv4View::check(p.push_front(Ipv4Header::kLen)));
  EthernetHeader{MacAddress::local(0x01000100), host_endpoint(0).mac, ethertype::kIpv4}.emit(
      *EthernetView::check(p.push_front(EthernetHeader::kLen)));
  p.meta().crc_pending = true;  // the checksum: filled when observed
  REQUIRE(p.size() == 54);

  const std::vector<std::byte> wire = sent(a, std::move(p));
  REQUIRE(wire.size() == kMinFrame);
  CHECK(zeros(std::span(wire).subspan(54)));
  auto ip = ConstIpv4View::check(ConstEthernetView::check(wire)->payload());
  REQUIRE(ip);
  CHECK(ip->total_length() == 40);
  CHECK(ip->verify_checksum());
  CHECK(tcp_verify_checksum(ip->payload(), TcpPseudoHeader::of(*ip)));
}

TEST_CASE("ethernet padding: a UDP datagram of 16 bytes leaves as 60, its checksum and length its own") {
  test::BuiltNetwork n(test::two_hosts("tcp"));
  Host& a = n.host(0);
  SocketStack& stack = *a.nic().fabric().sockets();
  Packet p = stack.udp_frame(*n.host(1).nic().fabric().sockets(), 40000, 5001, 16, 7);
  REQUIRE(p.size() == 58);  // Ethernet 14, IPv4 20, UDP 8, 16 bytes
  const std::vector<std::byte> wire = sent(a, std::move(p));
  REQUIRE(wire.size() == kMinFrame);
  CHECK(zeros(std::span(wire).subspan(58)));
  auto ip = ConstIpv4View::check(ConstEthernetView::check(wire)->payload());
  auto udp = ConstUdpView::check(ip->payload());
  CHECK(udp->length() == 24);
  CHECK(udp->verify_checksum(ip->src(), ip->dst()));
}

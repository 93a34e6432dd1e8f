// RoCE v2 on a host as the roce_v2 fabric builds it: the IPv4-mapped GID,
// the frame a QP's packet becomes (Ethernet to the gateway, IPv4 with the
// DSCP of its priority and ECT(0), UDP to 4791 from an entropy port), and
// the receiving side taking it apart.
#include "fabrics/roce_v2/roce_v2_fabric.hpp"

#include <doctest/doctest.h>

#include <cstring>

#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/headers.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/udp.hpp"
#include "tests/fixtures/iba_request.hpp"
#include "tests/fixtures/network.hpp"

using namespace rdmasim;

namespace {

test::BuiltNetwork roce(bool ecn, bool pfc) {
  ExperimentConfig c = test::two_hosts("roce_v2");
  c.ecn.enabled = ecn;
  c.pfc = pfc;
  return test::BuiltNetwork(std::move(c));
}

RoceV2Fabric& fabric_of(Host& h) { return static_cast<RoceV2Fabric&>(h.nic().fabric()); }

// An RC SEND ONLY of "ping" from a to QP 0x123 of b, encapsulated.
Packet send_a_to_b(test::BuiltNetwork& n) {
  Host& a = n.host(0);
  Packet p = test::rc_send_ping(a.nic());
  fabric_of(a).encap(p, n.fabric.address(a, n.host(1)), 0x42, 0x123);
  REQUIRE(p);
  return p;
}

}  // namespace

TEST_CASE("roce_v2: a host's GID is its IPv4 address, IPv4-mapped (A17.8)") {
  test::BuiltNetwork n = roce(false, false);
  const ibv_gid g = n.host(0).nic().gid();
  const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
  CHECK(std::memcmp(g.raw, want, 16) == 0);
  CHECK(std::memcmp(n.fabric.address(n.host(1), n.host(0)).grh.dgid.raw, want, 16) == 0);
}

TEST_CASE("roce_v2: Ethernet to the gateway, IPv4 with DSCP 8p+2 and ECT(0), UDP to 4791") {
  test::BuiltNetwork n = roce(true, true);  // PFC: priority 3
  Packet p = send_a_to_b(n);
  CHECK(p.meta().priority == 3);
  CHECK(p.meta().crc_pending);
  auto eth = ConstEthernetView::check(std::as_const(p).raw_bytes());
  REQUIRE(eth);
  CHECK(eth->ethertype() == ethertype::kIpv4);
  CHECK(eth->src() == host_endpoint(0).mac);
  auto ip = ConstIpv4View::check(eth->payload());
  REQUIRE(ip);
  CHECK(ip->src() == host_endpoint(0).ipv4);
  CHECK(ip->dst() == host_endpoint(1).ipv4);
  CHECK(ip->dscp() == 26);
  CHECK(ip->ecn() == Ecn::Ect0);
  auto udp = ConstUdpView::check(ip->payload());
  REQUIRE(udp);
  CHECK(udp->dst_port() == kUdpPortRoceV2);
  CHECK(udp->src_port() == RoceV2Fabric::source_port(0x42, 0x123));
  CHECK(udp->src_port() >= 0xC000);

  // Without ECN the packet is not ECN-capable; without PFC it is priority 0.
  test::BuiltNetwork plain = roce(false, false);
  Packet q = send_a_to_b(plain);
  auto ip2 = ConstIpv4View::check(ConstEthernetView::check(std::as_const(q).raw_bytes())->payload());
  CHECK(ip2->ecn() == Ecn::NotEct);
  CHECK(ip2->dscp() == 2);
}

TEST_CASE("roce_v2: the receiver takes the frame apart and knows the sender's GID") {
  test::BuiltNetwork n = roce(false, false);
  Packet p = send_a_to_b(n);
  fabric_of(n.host(0)).seal(p);
  IbaSource src;
  REQUIRE(fabric_of(n.host(1)).decap(p, src));
  CHECK(std::memcmp(src.sgid.data(), n.host(0).nic().gid().raw, 16) == 0);
  CHECK(std::memcmp(src.dgid.data(), n.host(1).nic().gid().raw, 16) == 0);
  // The transport headers are what is left.
  auto h = iba_parse(std::as_const(p).raw_bytes());
  REQUIRE(h);
  CHECK(h->h.opcode == RC_SEND_ONLY);
  CHECK(h->h.dest_qp == 0x123);
  CHECK(h->payload_len == 4);
}

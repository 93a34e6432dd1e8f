#include "fabrics/roce_v1/roce_v1_fabric.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "fabrics/ethernet/l2_bridge.hpp"
#include "fabrics/ethernet/wire/vlan.hpp"
#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/iba/transport/headers.hpp"
#include "fabrics/ip/wire/ipv6.hpp"
#include "fabrics/roce_v1/wire/icmpv6_nd.hpp"
#include "nodes/host/host.hpp"
#include "tests/fixtures/iba_request.hpp"

using namespace rdmasim;
using namespace rdmasim::literals;

namespace {

Ipv6Address ip(const char* text) { return *Ipv6Address::parse(text); }

// The EtherType after an optional 802.1Q tag, and the tag's (PCP, VID).
struct Seen {
  uint16_t type = 0;
  int pcp = -1, vid = -1;
  std::vector<std::byte> bytes;
};
Seen look(const Packet& p) {
  Seen s;
  s.bytes.assign(p.bytes().begin(), p.bytes().end());
  auto eth = ConstEthernetView::check(p.bytes());
  s.type = eth->ethertype();
  if (s.type == ethertype::kVlan) {
    auto tag = ConstVlanView::check(eth->payload());
    s.pcp = tag->pcp();
    s.vid = tag->vid();
    s.type = tag->ethertype();
  }
  return s;
}

// Which GIDs the hosts' ports have: the link-local ones NICs derive from
// their MACs (GID 0), whose MAC a QP reads from the GID itself, or global
// ones (2001:db8::/64 with the same interface identifiers, as an address
// configured on the netdev adds), whose MAC takes neighbour discovery.
enum class Gids { link_local, global };

// Hosts a and b on one link (or through a bridge), with RoCE v1 fabrics.
struct Bench {
  Simulator sim;
  PacketPool pool;
  std::vector<std::unique_ptr<Host>> hosts;
  std::unique_ptr<L2Bridge> bridge;
  std::vector<std::vector<Seen>> rx;  // frames each host received, in order

  Bench(int n, uint8_t priority = 0, std::optional<uint16_t> vid = {}, Gids gids = Gids::global) {
    rx.resize(n);
    for (int i = 0; i < n; ++i) {
      hosts.push_back(
          std::make_unique<Host>(sim, pool, std::string(1, char('a' + i)), NicConfig{}, HostConfig{}));
      Rnic& nic = hosts.back()->nic();
      const MacAddress mac = MacAddress::local(static_cast<uint32_t>(i + 1));
      Gid gid = roce_v1_gid(mac);
      if (gids == Gids::global) std::copy_n(ip("2001:db8::").octets.begin(), 8, gid.octets.begin());
      nic.set_fabric(std::make_unique<RoceV1Fabric>(nic, RoceV1Port{mac, gid, priority, vid}));
      nic.set_gid(to_ibv_gid(gid));
      hosts.back()->port(0).on_rx([this, i](Time, Packet& p) { rx[i].push_back(look(p)); });
    }
    if (n == 2) {
      Port::connect(hosts[0]->port(0), hosts[1]->port(0), LinkParams{}, 1);
      return;
    }
    bridge = std::make_unique<L2Bridge>(sim, "br", 0x100, SwitchConfig{});
    for (auto& h : hosts) Port::connect(h->port(0), bridge->add_port(), LinkParams{}, 1);
  }
  RoceV1Fabric& fabric(int i) { return static_cast<RoceV1Fabric&>(hosts[i]->nic().fabric()); }
  Gid gid(int i) { return fabric(i).self().gid; }

  // An RC SEND ONLY of 4 bytes from host `from` to QP 0x123 of host `to`.
  void send(int from, int to) {
    Packet p = test::rc_send_ping(hosts[from]->nic());
    ibv_ah_attr ah{};
    ah.is_global = 1;
    ah.grh.dgid = to_ibv_gid(gid(to));
    ah.grh.hop_limit = 64;
    fabric(from).encap(p, ah, 0x42, 0x123);
    if (p) hosts[from]->port(0).send(std::move(p));  // what the NIC does with a frame it gets back
  }
};

}  // namespace

TEST_CASE("roce_v1: GIDs are link-local addresses from the MAC (modified EUI-64)") {
  CHECK(roce_v1_gid(MacAddress::local(1)) == ip("fe80::ff:fe00:1"));
  CHECK(roce_v1_gid(*MacAddress::parse("00:11:22:33:44:55")) == ip("fe80::211:22ff:fe33:4455"));
  CHECK(roce_v1_gid(*MacAddress::parse("ec:0d:9a:01:02:03")) == ip("fe80::ee0d:9aff:fe01:203"));
  CHECK(from_ibv_gid(to_ibv_gid(ip("fe80::1"))) == ip("fe80::1"));
}

TEST_CASE("roce_v1: a link-local GID's MAC is read from the GID (rdma_get_ll_mac)") {
  CHECK(link_local_mac(ip("fe80::211:22ff:fe33:4455")) == *MacAddress::parse("00:11:22:33:44:55"));
  CHECK(link_local_mac(ip("fe80::ee0d:9aff:fe01:203")) == *MacAddress::parse("ec:0d:9a:01:02:03"));
  CHECK(link_local_mac(roce_v1_gid(MacAddress::local(7))) == MacAddress::local(7));
  CHECK_FALSE(link_local_mac(ip("2001:db8::211:22ff:fe33:4455")));
  CHECK_FALSE(link_local_mac(ip("fe80:0:0:1::1")));  // not fe80::/64

  // A QP's frames to a link-local GID leave at once, nothing asked of the
  // network: a burst of them is not held (or dropped) waiting for an answer.
  Bench b(2, 0, {}, Gids::link_local);
  for (int i = 0; i < 500; ++i) b.send(0, 1);
  CHECK(b.fabric(0).neighbors().stats().held == 0);
  CHECK(b.fabric(0).neighbors().stats().solicitations == 0);
  b.sim.run();
  REQUIRE(b.rx[1].size() == 500);
  for (const Seen& s : b.rx[1]) CHECK(s.type == ethertype::kRoce);
  CHECK(b.fabric(1).stats().unknown_qp == 500);
  CHECK(b.rx[0].empty());
}

TEST_CASE(
    "roce_v1: the first frame to a global GID waits for neighbour discovery, then goes as Ethernet + GRH + "
    "BTH") {
  Bench b(2);
  b.send(0, 1);
  CHECK(b.fabric(0).neighbors().stats().held == 1);
  b.sim.run();

  // b saw the solicitation, then the data frame; a saw the advertisement.
  REQUIRE(b.rx[1].size() == 2);
  REQUIRE(b.rx[0].size() == 1);
  const Seen& ns = b.rx[1][0];
  CHECK(ns.type == ethertype::kIpv6);
  CHECK(rdmasim::u8(ns.bytes[0]) == 0x33);  // 33:33:ff:00:00:02
  CHECK(b.rx[0][0].type == ethertype::kIpv6);
  CHECK(b.fabric(0).neighbor(b.gid(1)) == MacAddress::local(2));
  // b learnt a from the solicitation's source link-layer option: it never asked.
  CHECK(b.fabric(1).neighbor(b.gid(0)) == MacAddress::local(1));
  CHECK(b.fabric(1).neighbors().stats().solicitations == 0);
  CHECK(b.fabric(1).rx_stats().advertisements_sent == 1);

  Seen data = b.rx[1][1];
  CHECK(data.type == ethertype::kRoce);
  CHECK(data.pcp == -1);  // untagged
  auto eth = ConstEthernetView::check(data.bytes);
  CHECK(eth->dst() == MacAddress::local(2));
  CHECK(eth->src() == MacAddress::local(1));
  auto grh = ConstGrhView::check(eth->payload());
  CHECK(grh->ip_ver() == 6);
  CHECK(grh->next_header() == kGrhNextHeaderIba);
  CHECK(grh->pay_len() == 12 + 4 + 4);  // BTH, payload, ICRC
  CHECK(grh->hop_limit() == 64);
  CHECK(grh->sgid() == b.gid(0));
  CHECK(grh->dgid() == b.gid(1));
  CHECK(data.bytes.size() == 14 + 40 + 20);
  // The transport got it (and dropped it: there is no QP 0x123 on b).
  CHECK(b.fabric(1).stats().unknown_qp == 1);
  CHECK(b.fabric(1).stats().malformed == 0);
}

TEST_CASE("roce_v1: seal fills an ICRC that covers the GRH and BTH with variant fields masked") {
  Bench b(2);
  b.send(0, 1);
  b.sim.run();
  b.send(0, 1);  // resolved: leaves at once
  PacketPool& pool = b.pool;
  Packet copy;
  b.hosts[1]->port(0).on_rx([&](Time, Packet& p) {
    if (look(p).type == ethertype::kRoce) {
      CHECK(p.meta().crc_pending);
      copy = pool.make_copy(p.bytes());
      copy.meta() = p.meta();
    }
  });
  b.sim.run();
  REQUIRE(copy);
  seal_roce_v1(copy);
  CHECK_FALSE(copy.meta().crc_pending);
  auto l3 = copy.bytes().subspan(14);
  CHECK(icrc_ok(IcrcEncap::RoceV1, l3));
  CHECK(load_le32(l3.last(4)) != 0);
  // The ICRC does not change when a router-variant field does (flow label).
  const uint32_t before = load_le32(l3.last(4));
  l3[3] = std::byte{0x77};
  CHECK(compute_icrc(IcrcEncap::RoceV1, l3) == before);
  l3[40] = std::byte{0x11};  // BTH opcode is invariant
  CHECK(compute_icrc(IcrcEncap::RoceV1, l3) != before);
}

TEST_CASE("roce_v1: an 802.1Q tag carries the priority; a priority tag only on data") {
  SUBCASE("VLAN 100, priority 5: everything tagged, neighbour discovery at PCP 0") {
    Bench b(2, 5, 100);
    b.send(0, 1);
    b.sim.run();
    REQUIRE(b.rx[1].size() == 2);
    CHECK(b.rx[1][0].type == ethertype::kIpv6);
    CHECK(b.rx[1][0].vid == 100);
    CHECK(b.rx[1][0].pcp == 0);
    CHECK(b.rx[1][1].type == ethertype::kRoce);
    CHECK(b.rx[1][1].vid == 100);
    CHECK(b.rx[1][1].pcp == 5);
    CHECK(b.fabric(1).stats().unknown_qp == 1);
  }
  SUBCASE("priority-tagged (VID 0) for PFC without a VLAN") {
    Bench b(2, 3, 0);
    b.send(0, 1);
    b.sim.run();
    REQUIRE(b.rx[1].size() == 2);
    CHECK(b.rx[1][0].pcp == -1);
    CHECK(b.rx[1][1].vid == 0);
    CHECK(b.rx[1][1].pcp == 3);
    CHECK(b.fabric(1).stats().unknown_qp == 1);
  }
}

TEST_CASE("roce_v1: through a bridge, only the addressed host takes the frame") {
  Bench b(3);
  b.send(0, 1);
  b.sim.run();
  // c's NIC dropped the flooded solicitation (another solicited-node
  // group) and nothing else came: the bridge had learnt a and b.
  CHECK(b.rx[2].size() == 1);
  CHECK(b.fabric(2).rx_stats().not_for_us == 1);
  CHECK(b.fabric(2).rx_stats().nd_received == 0);
  CHECK(b.fabric(1).stats().unknown_qp == 1);
  CHECK(b.fabric(2).stats().unknown_qp == 0);

  // A frame for b handed to c (as unknown-unicast flooding would) is filtered
  // by MAC; one with c's MAC but b's GID by DGID.
  Packet p = test::rc_send_ping(b.hosts[0]->nic());
  ibv_ah_attr ah{};
  ah.grh.dgid = to_ibv_gid(b.gid(1));
  b.fabric(0).encap(p, ah, 1, 0x123);
  REQUIRE(p);
  b.fabric(2).receive(b.pool.make_copy(p.bytes()));
  CHECK(b.fabric(2).rx_stats().not_for_us == 2);
  EthernetView::check(p.bytes())->set_dst(MacAddress::local(3));
  b.fabric(2).receive(std::move(p));
  CHECK(b.fabric(2).rx_stats().wrong_gid == 1);
  CHECK(b.fabric(2).stats().unknown_qp == 0);
}

TEST_CASE("roce_v1: neighbour discovery with a bad checksum or hop limit is ignored") {
  Bench b(2);
  // A solicitation for b from a, built by hand.
  auto make = [&](uint8_t hop_limit, bool corrupt) {
    Packet p = b.pool.make();
    NdMessage ns;
    ns.target = b.gid(1);
    ns.link_layer = MacAddress::local(1);
    ns.emit(*NdView::check(p.push_back(ns.length())), b.gid(0), solicited_node(b.gid(1)));
    if (corrupt) p.bytes()[10] ^= std::byte{1};
    Ipv6Header h;
    h.payload_length = static_cast<uint16_t>(ns.length());
    h.next_header = kIpProtoIcmpv6;
    h.hop_limit = hop_limit;
    h.src = b.gid(0);
    h.dst = solicited_node(b.gid(1));
    h.emit(*Ipv6View::check(p.push_front(Ipv6Header::kLen)));
    EthernetHeader{ipv6_multicast_mac(h.dst), MacAddress::local(1), ethertype::kIpv6}.emit(
        *EthernetView::check(p.push_front(14)));
    return p;
  };
  b.fabric(1).receive(make(64, false));
  b.fabric(1).receive(make(255, true));
  CHECK(b.fabric(1).rx_stats().nd_invalid == 2);
  CHECK_FALSE(b.fabric(1).neighbor(b.gid(0)));
  b.fabric(1).receive(make(255, false));
  CHECK(b.fabric(1).rx_stats().nd_received == 1);
  CHECK(b.fabric(1).neighbor(b.gid(0)) == MacAddress::local(1));
  b.sim.run();
  CHECK(b.fabric(0).neighbor(b.gid(1)) == MacAddress::local(2));  // the advertisement reached a
}

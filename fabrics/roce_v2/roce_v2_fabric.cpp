#include "fabrics/roce_v2/roce_v2_fabric.hpp"

#include <cstring>

#include "fabrics/iba/icrc.hpp"
#include "fabrics/iba/opcodes.hpp"
#include "fabrics/ip/wire/int_option.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/ipv6.hpp"
#include "fabrics/ip/wire/irn_option.hpp"
#include "fabrics/ip/wire/udp.hpp"

namespace rdmasim {

namespace {
constexpr uint8_t kUdp = 17;
constexpr size_t kEth = EthernetHeader::kLen;

Ipv6Address gid_address(const ibv_gid& g) {
  Ipv6Address a;
  std::memcpy(a.octets.data(), g.raw, 16);
  return a;
}
}  // namespace

ibv_gid roce_v2_gid(IpVersion v, const IpEndpoint& e) {
  const Ipv6Address a = v == IpVersion::ipv4 ? Ipv6Address::v4_mapped(e.ipv4) : e.ipv6;
  ibv_gid g;
  std::memcpy(g.raw, a.octets.data(), 16);
  return g;
}

RoceV2Fabric::RoceV2Fabric(Rnic& nic, IpVersion ip, const IpEndpoint& self, uint8_t priority,
                           bool ecn_capable, int control_priority)
    : IbaFabric(nic),
      ip_(ip),
      self_(self),
      priority_(priority),
      control_priority_(control_priority),
      ecn_capable_(ecn_capable) {}

// The larger IP header: IPv6's, or IPv4's with the telemetry option.
size_t RoceV2Fabric::headroom() const {
  return kEth + std::max(Ipv6Header::kLen, Ipv4Header::kLen + IntOption::kLen) + UdpHeader::kLen;
}

uint16_t RoceV2Fabric::source_port(uint32_t src_qpn, uint32_t dest_qpn) {
  uint32_t h = (src_qpn * 0x9E3779B1u) ^ (dest_qpn * 0x85EBCA77u);
  h ^= h >> 15;
  return static_cast<uint16_t>(0xC000 | (h & 0x3FFF));
}

void RoceV2Fabric::encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) {
  // An acknowledgement (IBA 9.7.5.2: ACK or NAK) or a CNP (annex A17.9.2)
  // in the control class when there is one; the BTH opcode is the frame's first byte yet.
  uint8_t priority = priority_;
  if (control_priority_ >= 0) {
    const auto opcode = static_cast<uint8_t>(p.raw_bytes()[0]);
    if (opcode == RC_ACKNOWLEDGE || opcode == CNP) priority = static_cast<uint8_t>(control_priority_);
  }
  std::memset(p.push_back(kIcrcLen).data(), 0, kIcrcLen);  // filled when observed (seal)
  p.meta().crc_pending = true;
  p.meta().priority = priority;

  const uint16_t udp_len = static_cast<uint16_t>(p.size() + UdpHeader::kLen);
  UdpHeader udp{source_port(src_qpn, dest_qpn), kUdpPortRoceV2, udp_len, 0};
  udp.emit(*UdpView::check(p.push_front(UdpHeader::kLen)));

  // DSCP carries the traffic class: priority p maps to DSCP 8p + 2 (AF p1),
  // e.g. the common RoCE choice DSCP 26 for priority 3.
  const uint8_t dscp = static_cast<uint8_t>(priority << 3 | 2);
  const Ecn ecn = ecn_capable_ ? Ecn::Ect0 : Ecn::NotEct;
  const Ipv6Address dst = gid_address(dest.grh.dgid);
  if (ip_ == IpVersion::ipv4) {
    Ipv4Header ip;
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.total_length = static_cast<uint16_t>(udp_len + Ipv4Header::kLen);
    ip.identification = ip_id_++;
    ip.ttl = dest.grh.hop_limit ? dest.grh.hop_limit : 64;
    ip.protocol = kUdp;
    ip.src = self_.ipv4;
    ip.dst = Ipv4Address{{dst.octets[12], dst.octets[13], dst.octets[14], dst.octets[15]}};
    ip.emit(*Ipv4View::check(p.push_front(Ipv4Header::kLen)));
  } else {
    Ipv6Header ip;
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.flow_label = dest.grh.flow_label & 0xFFFFF;
    ip.payload_length = udp_len;
    ip.next_header = kUdp;
    ip.hop_limit = dest.grh.hop_limit ? dest.grh.hop_limit : 64;
    ip.src = self_.ipv6;
    ip.dst = dst;
    ip.emit(*Ipv6View::check(p.push_front(Ipv6Header::kLen)));
  }
  EthernetHeader eth{self_.gateway_mac, self_.mac,
                     ip_ == IpVersion::ipv4 ? ethertype::kIpv4 : ethertype::kIpv6};
  eth.emit(*EthernetView::check(p.push_front(kEth)));
}

// Makes room for an IPv4 option of `len` bytes after the 20-byte header
// (Ethernet and IP move forward), lets `fill` write it, and fixes the header.
template <class Fill>
static void push_ipv4_option(Packet& p, size_t len, Fill fill) {
  constexpr size_t kFixed = kEth + Ipv4Header::kLen;
  std::byte* base = p.push_front(len).data();
  std::memmove(base, base + len, kFixed);
  fill(std::span<std::byte>(base + kFixed, len));
  auto ip = Ipv4View::check(p.raw_bytes().subspan(kEth));
  ip->set_version_ihl(4, static_cast<uint8_t>((Ipv4Header::kLen + len) / 4));
  ip->set_total_length(static_cast<uint16_t>(ip->total_length() + len));
  ip->fill_checksum();
}

void RoceV2Fabric::encap_telemetry(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn,
                                   const IntStack& t, bool echo) {
  encap(p, dest, src_qpn, dest_qpn);
  if (ip_ != IpVersion::ipv4) return;  // the validate pass allows HPCC only over IPv4
  push_ipv4_option(p, IntOption::kLen, [&](std::span<std::byte> o) { IntOption::emit(o, t, echo); });
}

void RoceV2Fabric::encap_irn(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn,
                             const IrnExt& e) {
  encap(p, dest, src_qpn, dest_qpn);
  if (ip_ != IpVersion::ipv4) return;  // the validate pass allows IRN only over IPv4
  push_ipv4_option(p, IrnOption::kLen, [&](std::span<std::byte> o) { IrnOption::emit(o, e); });
}

bool RoceV2Fabric::is_link_control(const Packet& p) const {
  auto eth = ConstEthernetView::check(p.raw_bytes());
  return eth && eth->ethertype() == ethertype::kMacControl;
}

bool RoceV2Fabric::decap(Packet& p, IbaSource& src) {
  auto eth = ConstEthernetView::check(p.raw_bytes());
  if (!eth) return false;
  std::span<const std::byte> l3 = eth->payload();
  size_t ip_len = 0;
  std::span<const std::byte> udp_bytes;
  if (eth->ethertype() == ethertype::kIpv4) {
    auto ip = ConstIpv4View::check(l3);
    if (!ip || !ip->valid() || ip->protocol() != kUdp) return false;
    ip_len = ip->header_len();
    udp_bytes = ip->payload();
    const Ipv6Address s = Ipv6Address::v4_mapped(ip->src()), d = Ipv6Address::v4_mapped(ip->dst());
    std::memcpy(src.sgid.data(), s.octets.data(), 16);
    std::memcpy(src.dgid.data(), d.octets.data(), 16);
    std::memcpy(src.grh.data() + 20, l3.data(), Ipv4Header::kLen);
    src.ecn_ce = ip->ecn() == Ecn::Ce;
    src.hop_limit = ip->ttl();
    if (ip_len >= Ipv4Header::kLen + IntOption::kLen) {
      std::array<std::byte, IntOption::kLen> copy;
      std::memcpy(copy.data(), l3.data() + Ipv4Header::kLen, copy.size());
      if (auto o = IntOption::find(copy)) {
        src.telemetry = o->stack();
        src.telemetry_echo = o->echo();
      }
    }
    if (ip_len >= Ipv4Header::kLen + IrnOption::kLen)
      src.irn = IrnOption::parse(l3.subspan(Ipv4Header::kLen));
  } else if (eth->ethertype() == ethertype::kIpv6) {
    auto ip = ConstIpv6View::check(l3);
    if (!ip || !ip->valid() || ip->next_header() != kUdp) return false;
    ip_len = Ipv6Header::kLen;
    udp_bytes = ip->payload();
    std::memcpy(src.sgid.data(), ip->src().octets.data(), 16);
    std::memcpy(src.dgid.data(), ip->dst().octets.data(), 16);
    std::memcpy(src.grh.data(), l3.data(), Ipv6Header::kLen);
    src.ecn_ce = ip->ecn() == Ecn::Ce;
    src.hop_limit = ip->hop_limit();
  } else {
    return false;
  }
  auto udp = ConstUdpView::check(udp_bytes);
  if (!udp || !udp->valid() || udp->dst_port() != kUdpPortRoceV2 ||
      udp->length() < UdpHeader::kLen + kIcrcLen)
    return false;
  const size_t transport = udp->length() - UdpHeader::kLen - kIcrcLen;
  p.pull_front(kEth + ip_len + UdpHeader::kLen);
  p.pull_back(p.size() - transport);
  return true;
}

void RoceV2Fabric::seal(Packet& p) const { seal_roce_v2(p); }

void RoceV2Fabric::receive(Packet p) {
  if (is_ipv4_tcp(p.raw_bytes()) && to_kernel(p)) return;
  IbaFabric::receive(std::move(p));
}

uint32_t RoceV2Fabric::ip_mtu() const {
  constexpr uint32_t kRoceHeaders = 96;  // GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4
  return (128u << nic_.active_mtu()) + kRoceHeaders;
}

void seal_roce_v2(Packet& p) {
  if (!p.meta().crc_pending) return;
  p.meta().crc_pending = false;
  if (fill_ipv4_tcp_checksum(p.bytes())) return;  // the host kernel's TCP (programs' sockets)
  auto eth = EthernetView::check(p.bytes());
  if (!eth) return;
  std::span<std::byte> l3 = eth->payload();
  if (eth->ethertype() == ethertype::kIpv4) {
    auto ip = Ipv4View::check(l3);
    fill_icrc(IcrcEncap::RoceV2Ipv4, l3.first(ip->total_length()));
  } else if (eth->ethertype() == ethertype::kIpv6) {
    auto ip = Ipv6View::check(l3);
    // The ICRC first: the UDP checksum covers it (and the ICRC masks the checksum).
    fill_icrc(IcrcEncap::RoceV2Ipv6, l3.first(Ipv6Header::kLen + ip->payload_length()));
    UdpView::check(ip->payload())->fill_checksum(ip->src(), ip->dst());
  }
}

}  // namespace rdmasim

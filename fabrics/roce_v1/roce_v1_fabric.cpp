#include "fabrics/roce_v1/roce_v1_fabric.hpp"

#include <algorithm>
#include <cstring>

#include "fabrics/ethernet/wire/vlan.hpp"
#include "fabrics/iba/icrc.hpp"
#include "fabrics/ip/wire/ipv6.hpp"
#include "fabrics/roce_v1/wire/icmpv6_nd.hpp"

namespace rdmasim {

namespace {
constexpr size_t kEth = EthernetHeader::kLen;
constexpr size_t kTag = VlanTag::kLen;
constexpr size_t kBthLen = 12;

// ff02::1, all nodes (RFC 4291 2.7.1).
constexpr Ipv6Address kAllNodes{{0xFF, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}};

// The payload of an Ethernet frame after an optional 802.1Q tag, and its EtherType.
template <class B>
std::pair<uint16_t, std::span<B>> inner(const EthernetViewT<B>& eth) {
  if (eth.ethertype() == ethertype::kVlan) {
    auto tag = VlanViewT<B>::check(eth.payload());
    if (!tag) return {0, {}};
    return {tag->ethertype(), tag->payload()};
  }
  return {eth.ethertype(), eth.payload()};
}
}  // namespace

Gid roce_v1_gid(const MacAddress& mac) {
  // RFC 4291 appendix A: the 48-bit MAC becomes a 64-bit interface
  // identifier by inserting ff:fe in the middle and inverting the U/L bit.
  const auto& m = mac.octets;
  const uint64_t iid = uint64_t{static_cast<uint8_t>(m[0] ^ 0x02)} << 56 | uint64_t{m[1]} << 48 |
                       uint64_t{m[2]} << 40 | uint64_t{0xFF} << 32 | uint64_t{0xFE} << 24 |
                       uint64_t{m[3]} << 16 | uint64_t{m[4]} << 8 | m[5];
  return make_gid(kDefaultGidPrefix, iid);
}

std::optional<MacAddress> link_local_mac(const Gid& g) {
  const auto& o = g.octets;
  if (!(o[0] == 0xFE && o[1] == 0x80 &&
        std::all_of(o.begin() + 2, o.begin() + 8, [](uint8_t b) { return b == 0; })))
    return std::nullopt;
  MacAddress mac;
  mac.octets = {static_cast<uint8_t>(o[8] ^ 0x02), o[9], o[10], o[13], o[14], o[15]};
  return mac;
}

ibv_gid to_ibv_gid(const Gid& g) {
  ibv_gid r;
  std::memcpy(r.raw, g.octets.data(), 16);
  return r;
}

Gid from_ibv_gid(const ibv_gid& g) {
  Gid r;
  std::memcpy(r.octets.data(), g.raw, 16);
  return r;
}

void seal_roce_v1(Packet& p) {
  if (!p.meta().crc_pending) return;
  p.meta().crc_pending = false;
  auto eth = EthernetView::check(p.bytes());
  if (!eth) return;
  auto [type, l3] = inner(*eth);
  if (type != ethertype::kRoce) return;
  auto grh = GrhView::check(l3);
  if (!grh || Grh::kLen + grh->pay_len() > l3.size()) return;
  fill_icrc(IcrcEncap::RoceV1, l3.first(Grh::kLen + grh->pay_len()));
}

// ---------------------------------------------------------------- RoceV1Fabric

RoceV1Fabric::RoceV1Fabric(Rnic& nic, const RoceV1Port& self, NeighborCache::Params nd)
    : IbaFabric(nic),
      self_(self),
      cache_(nic.sim(), nd, [this](const Ipv6Address& a) { send_solicitation(a); }) {}

// The Rnic destroys its fabric last (its scheduler is gone by then), so
// there is nothing to unregister.
RoceV1Fabric::~RoceV1Fabric() = default;

size_t RoceV1Fabric::headroom() const { return kEth + kTag + Grh::kLen; }

void RoceV1Fabric::push_ethernet(Packet& p, const MacAddress& dst, uint16_t type, uint8_t pcp,
                                 bool data) const {
  // Neighbour discovery is best-effort traffic: a priority tag only carries
  // data frames' priority, a VLAN tags everything.
  const bool tagged = self_.vid && (*self_.vid != 0 || data);
  if (tagged) {
    VlanTag{pcp, false, *self_.vid, type}.emit(*VlanView::check(p.push_front(kTag)));
    type = ethertype::kVlan;
  }
  EthernetHeader{dst, self_.mac, type}.emit(*EthernetView::check(p.push_front(kEth)));
}

void RoceV1Fabric::encap(Packet& p, const ibv_ah_attr& dest, uint32_t src_qpn, uint32_t dest_qpn) {
  (void)src_qpn;
  (void)dest_qpn;
  std::memset(p.push_back(kIcrcLen).data(), 0, kIcrcLen);  // filled when observed (seal)
  p.meta().crc_pending = true;
  p.meta().priority = self_.priority;

  // A16.4.1: the GRH is mandatory; PayLen covers BTH through ICRC.
  const Gid dgid = from_ibv_gid(dest.grh.dgid);
  Grh grh;
  grh.tclass = dest.grh.traffic_class;
  grh.flow_label = dest.grh.flow_label & 0xFFFFF;
  grh.pay_len = static_cast<uint16_t>(p.size());
  grh.hop_limit = dest.grh.hop_limit ? dest.grh.hop_limit : 64;
  grh.sgid = self_.gid;
  grh.dgid = dgid;
  grh.emit(*GrhView::check(p.push_front(Grh::kLen)));

  std::optional<MacAddress> mac = link_local_mac(dgid);
  if (!mac) mac = cache_.lookup(dgid);
  push_ethernet(p, mac.value_or(MacAddress{}), ethertype::kRoce, self_.priority, true);
  if (!mac) {
    // No address yet: the frame waits in the cache and goes out (through
    // next_frame) when the advertisement comes. The QP sees it as sent.
    cache_.hold(dgid, std::move(p));
    p = Packet{};
  } else if (!out_.empty()) {
    // Frames that waited are still leaving: keep the order on the wire.
    queue_out(std::move(p));
    p = Packet{};
  }
}

bool RoceV1Fabric::decap(Packet& p, IbaSource& src) {
  auto eth = ConstEthernetView::check(p.raw_bytes());
  if (!eth) return false;
  auto [type, l3] = inner(*eth);
  if (type != ethertype::kRoce) return false;
  auto grh = ConstGrhView::check(l3);
  if (!grh || grh->ip_ver() != 6 || grh->next_header() != kGrhNextHeaderIba) return false;
  const size_t pay_len = grh->pay_len();
  if (pay_len < kBthLen + kIcrcLen || Grh::kLen + pay_len > l3.size()) return false;
  if (grh->dgid() != self_.gid) {
    ++rx_.wrong_gid;
    return false;
  }
  src.sgid = grh->sgid().octets;
  src.dgid = grh->dgid().octets;
  std::memcpy(src.grh.data(), l3.data(), Grh::kLen);
  const size_t front = static_cast<size_t>(l3.data() - p.raw_bytes().data()) + Grh::kLen;
  p.pull_front(front);
  p.pull_back(p.size() - (pay_len - kIcrcLen));
  return true;
}

bool RoceV1Fabric::accepts(const MacAddress& dst) const {
  if (dst == self_.mac || dst.is_broadcast()) return true;
  return dst == ipv6_multicast_mac(solicited_node(self_.gid)) || dst == ipv6_multicast_mac(kAllNodes);
}

void RoceV1Fabric::receive(Packet p) {
  auto eth = ConstEthernetView::check(p.raw_bytes());
  if (!eth) {
    ++stats_.malformed;
    return;
  }
  if (!accepts(eth->dst())) {  // the MAC's address filter
    ++rx_.not_for_us;
    return;
  }
  auto [type, l3] = inner(*eth);
  if (type == ethertype::kRoce) {
    IbaFabric::receive(std::move(p));
  } else if (type == ethertype::kIpv6) {
    on_ipv6(l3, eth->src());
  } else {
    ++rx_.other;
  }
}

// ---------------------------------------------------------------- neighbour discovery

void RoceV1Fabric::resolve(const Gid& g) {
  if (g != self_.gid) cache_.resolve(g);
}

// RFC 4861 7.2.2: to the solicited-node multicast address of the target,
// from our own address, with our MAC in a source link-layer address option.
void RoceV1Fabric::send_solicitation(const Gid& target) {
  const Ipv6Address dst = solicited_node(target);
  NdMessage ns;
  ns.type = NdType::NeighborSolicitation;
  ns.target = target;
  ns.link_layer = self_.mac;
  send_nd(ns, dst, ipv6_multicast_mac(dst));
}

// An ICMPv6 ND message from our GID, hop limit 255 (RFC 4861 7.1.1), untagged priority.
void RoceV1Fabric::send_nd(const NdMessage& m, const Ipv6Address& dst, const MacAddress& dst_mac) {
  Packet p = nic_.alloc(m.length());
  m.emit(*NdView::check(p.push_back(m.length())), self_.gid, dst);
  Ipv6Header ip;
  ip.payload_length = static_cast<uint16_t>(m.length());
  ip.next_header = kIpProtoIcmpv6;
  ip.hop_limit = kNdHopLimit;
  ip.src = self_.gid;
  ip.dst = dst;
  ip.emit(*Ipv6View::check(p.push_front(Ipv6Header::kLen)));
  push_ethernet(p, dst_mac, ethertype::kIpv6, 0, false);
  queue_out(std::move(p));
}

// RFC 4861 7.2.4: solicited and override set, our MAC in a target
// link-layer address option, to the solicitation's source.
void RoceV1Fabric::send_advertisement(const Gid& to, const MacAddress& to_mac) {
  NdMessage na;
  na.type = NdType::NeighborAdvertisement;
  na.solicited = true;
  na.override_flag = true;
  na.target = self_.gid;
  na.link_layer = self_.mac;
  ++rx_.advertisements_sent;
  send_nd(na, to, to_mac);
}

void RoceV1Fabric::on_ipv6(std::span<const std::byte> l3, const MacAddress& eth_src) {
  auto ip = ConstIpv6View::check(l3);
  if (!ip || !ip->valid() || ip->next_header() != kIpProtoIcmpv6) {
    ++rx_.other;
    return;
  }
  auto v = ConstNdView::check(ip->payload());
  if (!v) {
    ++rx_.other;
    return;
  }
  // RFC 4861 7.1.1 and 7.1.2: hop limit 255 (it never crossed a router),
  // a valid checksum, code 0.
  auto m = NdMessage::parse(*v);
  if (!m || ip->hop_limit() != kNdHopLimit || !v->verify_checksum(ip->src(), ip->dst())) {
    ++rx_.nd_invalid;
    return;
  }
  ++rx_.nd_received;
  const Ipv6Address src = ip->src();
  if (m->type == NdType::NeighborSolicitation) {
    if (m->target != self_.gid) return;
    // 7.2.3: the solicitation tells us the sender's address too.
    const MacAddress peer = m->link_layer.value_or(eth_src);
    if (src != Ipv6Address{}) {
      release(src, peer);
      send_advertisement(src, peer);
    }
  } else {
    release(m->target, m->link_layer.value_or(eth_src));
  }
}

void RoceV1Fabric::release(const Gid& g, const MacAddress& mac) {
  std::deque<Packet> ready = cache_.learn(g, mac);
  for (Packet& p : ready) {
    EthernetView::check(p.raw_bytes())->set_dst(mac);
    queue_out(std::move(p));
  }
}

void RoceV1Fabric::queue_out(Packet p) {
  out_.push_back(std::move(p));
  nic_.wake(*this);
}

Packet RoceV1Fabric::next_frame() {
  Packet p = std::move(out_.front());
  out_.pop_front();
  return p;
}

}  // namespace rdmasim

#include "fabrics/iwarp/iwarp_fabric.hpp"

#include <algorithm>
#include <cerrno>

#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/wire/checksum.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/ipv6.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/iwarp/iwarp_qp.hpp"

namespace rdmasim {

namespace {
constexpr size_t kEth = EthernetHeader::kLen;
}  // namespace

IwarpFabric::IwarpFabric(Rnic& nic, const IwarpNicConfig& cfg) : nic_(nic), cfg_(cfg) {
  if (!cfg_.streams) cfg_.streams = std::make_shared<MpaStreamRegistry>();
}

IwarpFabric::~IwarpFabric() = default;

size_t IwarpFabric::headroom() const { return kEth + Ipv6Header::kLen; }

std::unique_ptr<verbs::QueuePair> IwarpFabric::create_qp(verbs::Device& d, verbs::ProtectionDomain& pd,
                                                         uint32_t qpn, const verbs::QpInitAttr& init) {
  // RFC 5040 is connection-oriented only; siw (siw_create_qp) and iw_cxgb4
  // refuse other QP types with EOPNOTSUPP.
  if (init.qp_type != IBV_QPT_RC) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  return std::make_unique<IwarpQp>(d, pd, qpn, init, nic_, *this);
}

void IwarpFabric::attach(IwarpQp& qp, const std::array<uint8_t, 16>& remote, uint16_t remote_port,
                         uint16_t local_port) {
  const Key key{remote, remote_port, local_port};
  conns_[key] = &qp;
  // A SYN that came before it: handed over once the QP listens (it does in this instant).
  if (auto held = held_syns_.find(key); held != held_syns_.end()) {
    nic_.sim().at(nic_.sim().now(), [this, p = std::move(held->second)]() mutable { receive(std::move(p)); });
    held_syns_.erase(held);
  }
}

void IwarpFabric::detach(IwarpQp& qp) {
  std::erase_if(conns_, [&](const auto& kv) { return kv.second == &qp; });
  for (Pending& p : rx_pipe_)
    if (p.qp == &qp) p.qp = nullptr;
  std::erase(lru_, &qp);
}

void IwarpFabric::encap(Packet& p, const std::array<uint8_t, 16>& remote, bool ect) {
  p.meta().crc_pending = true;  // TCP checksum and MPA CRCs: filled when observed
  p.meta().priority = cfg_.priority;
  const uint8_t dscp = cfg_.priority ? static_cast<uint8_t>(cfg_.priority << 3 | 2) : 0;
  const Ecn ecn = ect ? Ecn::Ect0 : Ecn::NotEct;
  if (cfg_.ip == IpVersion::ipv4) {
    Ipv4Header ip;
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.total_length = static_cast<uint16_t>(p.size() + Ipv4Header::kLen);
    ip.identification = ip_id_++;
    ip.protocol = kIpProtoTcp;
    ip.src = cfg_.self.ipv4;
    ip.dst = Ipv4Address{{remote[12], remote[13], remote[14], remote[15]}};
    ip.emit(*Ipv4View::check(p.push_front(Ipv4Header::kLen)));
  } else {
    Ipv6Header ip;
    ip.dscp = dscp;
    ip.ecn = ecn;
    ip.payload_length = static_cast<uint16_t>(p.size());
    ip.next_header = kIpProtoTcp;
    ip.src = cfg_.self.ipv6;
    ip.dst.octets = remote;
    ip.emit(*Ipv6View::check(p.push_front(Ipv6Header::kLen)));
  }
  EthernetHeader eth{cfg_.self.gateway_mac, cfg_.self.mac,
                     cfg_.ip == IpVersion::ipv4 ? ethertype::kIpv4 : ethertype::kIpv6};
  eth.emit(*EthernetView::check(p.push_front(kEth)));
}

void IwarpFabric::receive(Packet p) {
  auto eth = ConstEthernetView::check(p.bytes());
  if (!eth) {
    ++stats_.malformed;
    return;
  }
  if (eth->ethertype() == ethertype::kMacControl) return;  // PAUSE ends at the MAC
  std::array<uint8_t, 16> remote{};
  size_t ip_len = 0, seg_len = 0;
  bool ce = false;
  std::span<const std::byte> seg;
  if (eth->ethertype() == ethertype::kIpv4) {
    auto ip = ConstIpv4View::check(eth->payload());
    if (!ip || !ip->valid() || ip->protocol() != kIpProtoTcp) {
      ++stats_.malformed;
      return;
    }
    remote = Ipv6Address::v4_mapped(ip->src()).octets;
    ce = ip->ecn() == Ecn::Ce;
    ip_len = ip->header_len();
    seg_len = ip->total_length() - ip_len;
    seg = ip->payload();
  } else if (eth->ethertype() == ethertype::kIpv6) {
    auto ip = ConstIpv6View::check(eth->payload());
    if (!ip || !ip->valid() || ip->next_header() != kIpProtoTcp) {
      ++stats_.malformed;
      return;
    }
    remote = ip->src().octets;
    ce = ip->ecn() == Ecn::Ce;
    ip_len = Ipv6Header::kLen;
    seg_len = ip->payload_length();
    seg = ip->payload();
  } else {
    ++stats_.malformed;
    return;
  }
  auto tcp = ConstTcpView::check(seg);
  if (!tcp || seg.size() < seg_len) {
    ++stats_.malformed;
    return;
  }
  const Key key{remote, tcp->src_port(), tcp->dst_port()};
  auto it = conns_.find(key);
  if (it == conns_.end()) {
    // Not the offload engine's: the host kernel's (its sockets) when it has one, else dropped.
    // A SYN to the passive ends' port no kernel socket takes comes back (engine_syn).
    if (eth->ethertype() == ethertype::kIpv4 && to_kernel(p)) return;
    if (!hold_syn(key, tcp->flags(), p)) ++stats_.no_connection;
    return;
  }
  ++stats_.segments_received;
  IwarpQp* qp = it->second;
  const bool data = seg_len > tcp->header_len();
  p.pull_front(kEth + ip_len);
  if (p.size() > seg_len) p.pull_back(p.size() - seg_len);  // Ethernet padding of short frames

  // The TCP offload engine: a pipeline in front of the connection, FIFO so
  // segments of one connection never overtake each other.
  Time cost = data ? cfg_.cost.rx_segment : cfg_.cost.rx_ack;
  if (conns_.size() > cfg_.cost.cached_connections) {
    auto hit = std::find(lru_.begin(), lru_.end(), qp);
    if (hit != lru_.end()) {
      lru_.erase(hit);
    } else {
      ++stats_.context_misses;
      cost += nic_.config().pcie_latency * 2;  // the TCB is read from host memory: a PCIe round trip
      if (lru_.size() >= cfg_.cost.cached_connections) lru_.pop_back();
    }
    lru_.push_front(qp);
  }
  const Time ready = std::max(nic_.sim().now() + cost, rx_last_);
  rx_last_ = ready;
  rx_pipe_.push_back({std::move(p), qp, ce});
  nic_.sim().at(ready, [this] { rx_done(); });
}

// A connection request to the passive ends' port before the QP it is for
// listens (its consumer has not reached RTR): held, as a listener's backlog
// holds it, for that QP (a retransmitted SYN replaces it).
bool IwarpFabric::hold_syn(const Key& key, uint8_t tcp_flags, Packet& p) {
  const bool syn = (tcp_flags & (tcp_flag::kSyn | tcp_flag::kAck | tcp_flag::kRst)) == tcp_flag::kSyn;
  if (!syn || std::get<2>(key) != cfg_.listen_port) return false;
  held_syns_.insert_or_assign(key, std::move(p));
  return true;
}

void IwarpFabric::engine_syn(Packet p) {
  auto eth = ConstEthernetView::check(p.bytes());
  auto ip = eth ? ConstIpv4View::check(eth->payload()) : std::nullopt;
  auto tcp = ip ? ConstTcpView::check(ip->payload()) : std::nullopt;
  if (!tcp || !hold_syn(Key{Ipv6Address::v4_mapped(ip->src()).octets, tcp->src_port(), tcp->dst_port()},
                        tcp->flags(), p))
    ++stats_.no_connection;
}

void IwarpFabric::rx_done() {
  Pending next = std::move(rx_pipe_.front());
  rx_pipe_.pop_front();
  if (next.qp) next.qp->tcp_input(std::move(next.p), next.ce);
}

void IwarpFabric::seal(Packet& p) const { seal_iwarp(p, *cfg_.streams); }

void seal_iwarp(Packet& p, const MpaStreamRegistry& streams) {
  if (!p.meta().crc_pending) return;
  p.meta().crc_pending = false;
  auto eth = EthernetView::check(p.bytes());
  if (!eth) return;
  std::span<std::byte> l3 = eth->payload();
  if (eth->ethertype() == ethertype::kIpv4) {
    auto ip = ConstIpv4View::check(l3);
    if (!ip || ip->protocol() != kIpProtoTcp || ip->total_length() > l3.size()) return;
    streams.seal(l3.subspan(ip->header_len(), ip->total_length() - ip->header_len()),
                 TcpPseudoHeader::of(*ip));
  } else if (eth->ethertype() == ethertype::kIpv6) {
    auto ip = ConstIpv6View::check(l3);
    if (!ip || ip->next_header() != kIpProtoTcp || Ipv6Header::kLen + ip->payload_length() > l3.size())
      return;
    streams.seal(l3.subspan(Ipv6Header::kLen, ip->payload_length()), TcpPseudoHeader::of(*ip));
  }
}

}  // namespace rdmasim

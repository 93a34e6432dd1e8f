#include "fabrics/tcp/kernel_nic.hpp"

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string>

#include "core/bytes.hpp"
#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/ip/wire/udp.hpp"
#include "fabrics/tcp/kernel_tcp.hpp"

namespace rdmasim {

namespace {
constexpr size_t kEth = EthernetHeader::kLen;
constexpr size_t kUdpAt = kEth + Ipv4Header::kLen;
}  // namespace

KernelNic::KernelNic(Host& host, const IpEndpoint& self, const TcpEndpointConfig& tcp)
    : host_(host), ip_(host, self, tcp) {
  if (host.config().stack == NetStack::dpdk) {
    // Kernel bypass: the poll-mode driver takes the frames, no interrupt.
    pmd_ = std::make_unique<PollModeDriver>(host.nic().sim(), host.cpu(), host.config().dpdk);
    pmd_->set_deliver([this](Packet p) { deliver(std::move(p)); });
    pmd_->set_on_drop([this](const Packet& p) {
      if (auto port = udp_port(p)) ++udp_[*port].stats.ring_drops;
    });
    return;
  }
  rx_ = std::make_unique<NetRx>(host.nic().sim(), host.cpu(), host.config());
  rx_->set_deliver([this](Packet p) { deliver(std::move(p)); });
  rx_->set_on_drop([this](const Packet& p, NetRx::Drop why) {
    if (auto port = udp_port(p)) {
      auto& st = udp_[*port].stats;
      ++(why == NetRx::Drop::ring ? st.ring_drops : st.backlog_drops);
    }
  });
}

KernelNic::~KernelNic() = default;

// RSS: the receive queue of a frame from its addresses and ports (the
// IPv4 source and destination and the 4 bytes after a 20-byte IP header),
// FNV-1a in place of the NIC's Toeplitz hash.
uint32_t KernelNic::rss_hash(const Packet& p) {
  auto b = p.raw_bytes();
  uint32_t h = 2166136261u;
  for (size_t i = kEth + 12; i < std::min(b.size(), kUdpAt + 4); ++i)
    h = (h ^ static_cast<uint8_t>(b[i])) * 16777619u;
  return h;
}

size_t KernelNic::headroom() const { return kEth + Ipv4Header::kLen + TcpView::kMaxLen; }

std::optional<NicFabric::StackReport> KernelNic::stack_report() const {
  if (pmd_) {
    const PollModeDriver::Stats& d = pmd_->stats();
    return StackReport{"dpdk",
                       "dpdk_rx",
                       {{"frames", d.frames},
                        {"ring_drops", d.ring_drops},
                        {"bursts", d.bursts},
                        {"processed", d.processed},
                        {"largest_burst", d.largest_burst},
                        {"poll_cores", pmd_->queues()},
                        {"discarded", discarded_}}};
  }
  const NetRx::Stats& k = rx_->stats();
  return StackReport{"kernel",
                     "kernel_rx",
                     {{"frames", k.frames},
                      {"ring_drops", k.ring_drops},
                      {"backlog_drops", k.backlog_drops},
                      {"processed", k.processed},
                      {"polls", k.polls},
                      {"ksoftirqd_wakeups", k.ksoftirqd_wakeups},
                      {"discarded", discarded_}},
                     k.interrupts};
}

std::unique_ptr<verbs::QueuePair> KernelNic::create_qp(verbs::Device&, verbs::ProtectionDomain&, uint32_t,
                                                       const verbs::QpInitAttr&) {
  errno = EOPNOTSUPP;
  return nullptr;
}

Packet KernelNic::udp_frame(const SocketStack& peer, uint16_t sport, uint16_t dport, uint32_t bytes,
                            uint64_t seq) {
  const IpEndpoint& to = static_cast<const KernelNic&>(peer).self();
  Packet p = host_.nic().alloc(bytes);
  std::span<std::byte> data = p.push_back(bytes);
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(0x20 + (i + seq) % 0x5F);  // printable ASCII
  // The sequence number and the send time lead the payload, when it has room.
  if (bytes >= 8) store_be64(data.first(8), seq);
  if (bytes >= 16) store_be64(data.subspan(8, 8), static_cast<uint64_t>(host_.nic().sim().now().count()));
  const uint16_t udp_len = static_cast<uint16_t>(bytes + UdpHeader::kLen);
  UdpHeader{sport, dport, udp_len, 0}.emit(*UdpView::check(p.push_front(UdpHeader::kLen)));
  UdpView::check(p.raw_bytes())->fill_checksum(ip_.self().ipv4, to.ipv4);
  Ipv4Header ip;
  ip.total_length = static_cast<uint16_t>(udp_len + Ipv4Header::kLen);
  ip.identification = ip_.next_ip_id();
  ip.protocol = kIpProtoUdp;
  ip.src = ip_.self().ipv4;
  ip.dst = to.ipv4;
  ip.emit(*Ipv4View::check(p.push_front(Ipv4Header::kLen)));
  EthernetHeader{ip_.self().gateway_mac, ip_.self().mac, ethertype::kIpv4}.emit(
      *EthernetView::check(p.push_front(kEth)));
  return p;  // the port pads a short one to the minimum frame
}

uint16_t KernelNic::bind_udp(UdpSocket& s) {
  uint16_t port = 5001;
  while (udp_.count(port) && udp_[port].socket) ++port;
  udp_[port].socket = &s;
  return port;
}

std::optional<uint16_t> KernelNic::udp_port(const Packet& p) {
  auto b = p.raw_bytes();
  if (b.size() < kUdpAt + UdpHeader::kLen) return std::nullopt;
  auto eth = ConstEthernetView::check(b);
  if (eth->ethertype() != ethertype::kIpv4) return std::nullopt;
  auto ip = ConstIpv4View::check(eth->payload());
  if (!ip || ip->protocol() != kIpProtoUdp || ip->ihl() != 5) return std::nullopt;
  return load_be16(b.subspan(kUdpAt + 2, 2));
}

void KernelNic::receive(Packet p) {
  if (auto port = udp_port(p)) ++udp_[*port].stats.received;
  // The NIC writes the frame into a ring buffer in host memory (DMA).
  host_.nic().sim().after(host_.config().pcie.latency, [this, q = std::move(p)]() mutable {
    if (pmd_) {
      const uint32_t hash = rss_hash(q);
      pmd_->receive(std::move(q), hash);
    } else {
      rx_->receive(std::move(q));
    }
  });
}

void KernelNic::deliver(Packet p) {
  auto b = p.raw_bytes();
  auto eth = ConstEthernetView::check(b);
  auto ip = eth ? ConstIpv4View::check(eth->payload()) : std::nullopt;
  // ip_rcv: a header that does not check out, or a packet for another host, goes.
  if (!ip || eth->ethertype() != ethertype::kIpv4 || !ip->valid() || !ip->verify_checksum() ||
      ip->dst() != ip_.self().ipv4) {
    ++discarded_;
    return;
  }
  auto l4 = eth->payload().subspan(ip->header_len(), ip->total_length() - ip->header_len());
  if (ip->protocol() == kIpProtoUdp) {
    auto udp = ConstUdpView::check(l4);
    auto it = udp && udp->valid() ? udp_.find(udp->dst_port()) : udp_.end();
    if (it == udp_.end() || !it->second.socket || !udp->verify_checksum(ip->src(), ip->dst())) {
      ++discarded_;
      return;
    }
    const auto payload = l4.subspan(UdpHeader::kLen, udp->length() - UdpHeader::kLen);
    const Time sent =
        payload.size() >= 16 ? Time::ps(static_cast<int64_t>(load_be64(payload.subspan(8, 8)))) : Time{};
    it->second.socket->enqueue(
        {static_cast<uint32_t>(payload.size()), UdpSocket::truesize(static_cast<uint32_t>(b.size())), sent});
    return;
  }
  // No socket for a TCP segment: dropped (Linux would answer a RST; no
  // workload sends to a port nobody listens on).
  if (ip->protocol() == kIpProtoTcp && ip_.tcp_input(p)) return;
  ++discarded_;
}

std::pair<std::unique_ptr<StreamConnection>, std::unique_ptr<StreamConnection>> KernelNic::connect(
    StreamSocket& client, SocketStack& peer, StreamSocket& server, uint32_t client_iss, uint32_t server_iss,
    uint16_t server_port) {
  KernelNic& nb = static_cast<KernelNic&>(peer);
  if (server_port == 0) server_port = nb.listen_port();
  const uint16_t client_port = ephemeral_port();
  const TcpPseudoHeader ip = TcpPseudoHeader::v4(self().ipv4, nb.self().ipv4);
  auto a = std::make_unique<KernelTcp>(*this, client, TcpFlow{ip, client_port, server_port}, client_iss);
  auto b =
      std::make_unique<KernelTcp>(nb, server, TcpFlow{ip.reversed(), server_port, client_port}, server_iss);
  return {std::move(a), std::move(b)};
}

void KernelNic::seal_kernel_frame(Packet& p) {
  if (!p.meta().crc_pending) return;
  p.meta().crc_pending = false;
  fill_ipv4_tcp_checksum(p.raw_bytes());
}

}  // namespace rdmasim

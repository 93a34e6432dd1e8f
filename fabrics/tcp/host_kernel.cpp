#include "fabrics/tcp/host_kernel.hpp"

#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/tcp/kernel_tcp.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

std::unique_ptr<HostKernel> HostKernel::beside(Host& h, const ExperimentConfig& cfg, uint64_t seed) {
  NicFabric& nic = h.nic().fabric();
  auto* ipnic = dynamic_cast<IpNic*>(&nic);
  if (!ipnic || ipnic->ip_version() != IpVersion::ipv4) return nullptr;
  TcpEndpointConfig tcp = tcp_endpoint_config(cfg, ipnic->ip_mtu());
  // The socket buffers bound what TCP keeps to send and what it offers (as on fabric tcp).
  tcp.send_buffer = static_cast<uint32_t>(h.config().kernel.sndbuf);
  tcp.receive_buffer = static_cast<uint32_t>(h.config().kernel.rcvbuf);
  return std::unique_ptr<HostKernel>(new HostKernel(h, nic, ipnic->ip_self(), tcp, seed, *ipnic));
}

std::unique_ptr<HostTcp> host_tcp_beside(Host& h, const ExperimentConfig& cfg, uint64_t seed) {
  return HostKernel::beside(h, cfg, seed);
}

HostKernel::HostKernel(Host& h, NicFabric& nic, const IpEndpoint& self, const TcpEndpointConfig& tcp,
                       uint64_t seed, IpNic& ipnic)
    : host_(h),
      nic_(nic),
      ipnic_(ipnic),
      ip_(h, self, tcp),
      rx_(std::make_unique<NetRx>(h.nic().sim(), h.cpu(), h.config())),
      rng_(Rng::stream(seed, "host kernel " + h.name())) {
  rx_->set_deliver([this](Packet p) { deliver(std::move(p)); });
  // The NIC writes the frame into the kernel's receive ring (DMA), as a plain NIC does (kernel_nic.cpp).
  nic_.set_kernel_input([this](Packet p) {
    host_.nic().sim().after(host_.config().pcie.latency,
                            [this, q = std::move(p)]() mutable { rx_->receive(std::move(q)); });
  });
}

HostKernel::~HostKernel() {
  nic_.set_kernel_input(nullptr);
  host_.nic().forget(*this);
}

void HostKernel::deliver(Packet p) {
  auto b = p.raw_bytes();
  auto eth = ConstEthernetView::check(b);
  auto ip = eth ? ConstIpv4View::check(eth->payload()) : std::nullopt;
  // ip_rcv: a header that does not check out, or a packet for another host, goes.
  if (!ip || !ip->valid() || !ip->verify_checksum() || ip->dst() != ip_.self().ipv4 ||
      ip->protocol() != kIpProtoTcp) {
    ++discarded_;
    return;
  }
  if (ip_.tcp_input(p)) return;
  auto l4 = eth->payload().subspan(ip->header_len(), ip->total_length() - ip->header_len());
  auto tcp = ConstTcpView::check(l4);
  if (!tcp || !tcp->valid()) {
    ++discarded_;
    return;
  }
  const uint8_t f = tcp->flags();
  if ((f & tcp_flag::kSyn) == 0 || (f & (tcp_flag::kAck | tcp_flag::kRst)) != 0) {
    ++discarded_;  // no connection has it (a late segment of one gone): dropped
    return;
  }
  auto l = listeners_.find(tcp->dst_port());
  if (l != listeners_.end()) {
    // tcp_v4_conn_request: a connection for this 4-tuple, which takes the SYN.
    l->second(TcpEnds{ip->dst().to_u32(), ip->src().to_u32(), tcp->dst_port(), tcp->src_port()});
    if (ip_.tcp_input(p)) return;
  } else if (!ipnic_.engine_port(tcp->dst_port())) {
    reset(*ip, *tcp, l4.size() - tcp->header_len());
    return;
  } else {
    ipnic_.engine_syn(std::move(p));
    return;
  }
  ++discarded_;
}

std::unique_ptr<KernelTcp> HostKernel::open(StreamSocket& socket, const TcpEnds& ends) {
  const TcpFlow flow{
      TcpPseudoHeader::v4(Ipv4Address::from_u32(ends.local_addr), Ipv4Address::from_u32(ends.peer_addr)),
      ends.local_port, ends.peer_port};
  auto c = std::make_unique<KernelTcp>(ip_, socket, flow, iss());
  c->set_immediate_handshake_ack(true);
  return c;
}

std::unique_ptr<StreamConnection> HostKernel::accept(StreamSocket& socket, const TcpEnds& ends) {
  auto c = open(socket, ends);
  c->listen();
  return c;
}

std::unique_ptr<StreamConnection> HostKernel::connect(StreamSocket& socket, uint32_t addr, uint16_t port) {
  const uint16_t local = ephemeral_port();
  return open(socket, TcpEnds{ipv4(), addr, local, port});
}

// RFC 9293 3.10.7.1, a segment to a closed port whose ACK bit is off:
// <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>, the SYN counting one.
void HostKernel::reset(const ConstIpv4View& ip, const ConstTcpView& tcp, size_t payload) {
  Rnic& nic = host_.nic();
  Packet r = nic.alloc(0);
  TcpHeader h;
  h.src_port = tcp.dst_port();
  h.dst_port = tcp.src_port();
  h.seq = 0;
  h.ack = tcp.seq() + 1 + static_cast<uint32_t>(payload);
  h.flags = tcp_flag::kRst | tcp_flag::kAck;
  h.emit(*TcpView::check(r.push_front(h.header_len())));
  ip_.encap_tcp(r, ip.src(), false);
  resets_.push_back(std::move(r));
  nic.wake(*this);
}

}  // namespace rdmasim

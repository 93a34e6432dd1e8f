#include "fabrics/tcp/kernel_ip.hpp"

#include "fabrics/ip/wire/ipv4.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/tcp/kernel_tcp.hpp"

namespace rdmasim {

void KernelIp::attach_tcp(KernelTcp& c) {
  const TcpFlow& f = c.tcp().flow();
  conns_[{f.ip.dst4.to_u32(), f.remote_port, f.local_port}] = &c;
}

void KernelIp::detach_tcp(KernelTcp& c) {
  const TcpFlow& f = c.tcp().flow();
  conns_.erase({f.ip.dst4.to_u32(), f.remote_port, f.local_port});
}

KernelTcp* KernelIp::connection(Ipv4Address remote, uint16_t remote_port, uint16_t local_port) const {
  auto it = conns_.find({remote.to_u32(), remote_port, local_port});
  return it == conns_.end() ? nullptr : it->second;
}

bool KernelIp::tcp_input(Packet& p) {
  auto eth = ConstEthernetView::check(p.raw_bytes());
  auto ip = eth ? ConstIpv4View::check(eth->payload()) : std::nullopt;
  if (!ip || !ip->valid() || ip->protocol() != kIpProtoTcp) return false;
  auto l4 = eth->payload().subspan(ip->header_len(), ip->total_length() - ip->header_len());
  auto tcp = ConstTcpView::check(l4);
  KernelTcp* c = tcp ? connection(ip->src(), tcp->src_port(), tcp->dst_port()) : nullptr;
  if (!c || tcp->header_len() > l4.size()) return false;
  const bool ce = ip->ecn() == Ecn::Ce;
  const size_t seg_len = l4.size();
  p.pull_front(EthernetHeader::kLen + ip->header_len());
  if (p.size() > seg_len) p.pull_back(p.size() - seg_len);  // Ethernet padding of short frames
  c->receive(std::move(p), ce);
  return true;
}

void KernelIp::encap_tcp(Packet& p, Ipv4Address dst, bool ect) {
  p.meta().crc_pending = true;  // the TCP checksum: filled when observed
  Ipv4Header ip;
  ip.ecn = ect ? Ecn::Ect0 : Ecn::NotEct;
  ip.total_length = static_cast<uint16_t>(p.size() + Ipv4Header::kLen);
  ip.identification = next_ip_id();
  ip.protocol = kIpProtoTcp;
  ip.src = self_.ipv4;
  ip.dst = dst;
  ip.emit(*Ipv4View::check(p.push_front(Ipv4Header::kLen)));
  EthernetHeader{self_.gateway_mac, self_.mac, ethertype::kIpv4}.emit(
      *EthernetView::check(p.push_front(EthernetHeader::kLen)));
}

}  // namespace rdmasim

// A host kernel's TCP over IPv4: its connections by 4-tuple, and the IPv4
// and Ethernet headers of their segments. KernelNic (fabric: tcp) has one;
// so has the kernel beside an RNIC on a fabric that carries IP
// (host_kernel.hpp, the sockets of the programs rdmasim runs).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "core/packet.hpp"
#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/tcp/tcp_config.hpp"
#include "nodes/host/host.hpp"

namespace rdmasim {

class KernelTcp;

class KernelIp {
 public:
  KernelIp(Host& host, const IpEndpoint& self, const TcpEndpointConfig& tcp)
      : host_(host), self_(self), tcp_(tcp) {}

  Host& host() const { return host_; }
  const IpEndpoint& self() const { return self_; }
  // Every connection uses these options.
  const TcpEndpointConfig& tcp_config() const { return tcp_; }

  // Segments reach a connection by its 4-tuple.
  void attach_tcp(KernelTcp& c);
  void detach_tcp(KernelTcp& c);
  KernelTcp* connection(Ipv4Address remote, uint16_t remote_port, uint16_t local_port) const;
  // An Ethernet + IPv4 frame for this host that carries TCP: its segment
  // goes to its connection (true), or `p` is left as it was (false: no
  // connection has that 4-tuple, or the TCP header does not fit).
  bool tcp_input(Packet& p);

  // Prepends IPv4 and Ethernet to a TCP segment towards `dst`.
  void encap_tcp(Packet& p, Ipv4Address dst, bool ect);
  // The IPv4 identification of this host's next datagram.
  uint16_t next_ip_id() { return ip_id_++; }

 private:
  Host& host_;
  IpEndpoint self_;
  TcpEndpointConfig tcp_;
  // (remote address, remote port, local port) -> connection
  std::map<std::tuple<uint32_t, uint16_t, uint16_t>, KernelTcp*> conns_;
  uint16_t ip_id_ = 0;
};

}  // namespace rdmasim

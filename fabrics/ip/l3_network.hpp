// IP networks (roce_v2, iwarp) share their switching: L3 switches with ECMP
// routes, and one addressing plan for hosts.
#pragma once

#include <span>
#include <vector>

#include "fabrics/ethernet/wire/ethernet.hpp"
#include "fabrics/ip/tcp/tcp_config.hpp"
#include "fabrics/ip/wire/address.hpp"
#include "fabrics/network.hpp"

namespace rdmasim {

struct IpEndpoint {
  MacAddress mac;          // this host's port
  MacAddress gateway_mac;  // the L3 switch every frame goes to first
  Ipv4Address ipv4;
  Ipv6Address ipv6;
};

// A host NIC whose wire carries IP (roce_v2, iwarp): the address the
// host's kernel has on it beside the RDMA engine, for the kernel's own TCP
// (fabrics/tcp/host_kernel.hpp: the programs' out-of-band sockets).
class IpNic {
 public:
  virtual const IpEndpoint& ip_self() const = 0;
  virtual IpVersion ip_version() const = 0;
  // The interface's IP MTU, which the kernel's TCP takes its MSS from.
  virtual uint32_t ip_mtu() const = 0;
  // A TCP port the RDMA engine itself listens on (iwarp's passive ends): a
  // SYN to it that no kernel socket takes is the engine's to wait for, not
  // one the kernel refuses.
  virtual bool engine_port(uint16_t) const { return false; }
  // Such a SYN (Ethernet + IPv4 + TCP), handed to the engine.
  virtual void engine_syn(Packet) {}

 protected:
  ~IpNic() = default;
};

// Whether an Ethernet frame holds IPv4 + TCP (the kernel's, on roce_v2).
bool is_ipv4_tcp(std::span<const std::byte> frame);
// Fills the TCP checksum of an Ethernet + IPv4 + TCP frame; false (and
// nothing written) for any other frame.
bool fill_ipv4_tcp_checksum(std::span<std::byte> frame);

// Host i: MAC 02:00:00:00:xx:xx, IPv4 10.0.0.0 + i + 1, IPv6 fd00::i+1.
IpEndpoint host_endpoint(int i);
// Creates an L3Switch for every switch and router of the topology.
void build_l3_switches(Network& net);
// After the links: neighbour MACs and ECMP routes; returns each host's endpoint.
std::vector<IpEndpoint> finish_l3(Network& net);
// 802.1Qbb on every port of hosts and L3 switches.
void enable_l3_pfc(Network& net, const std::vector<IpEndpoint>& eps);
// The address vector towards `to` on an IP fabric: its GID (its IP address).
ibv_ah_attr ip_address(Host& from, Host& to);
// The experiment's `tcp:` section as the TCP model's endpoint options, for
// TCP over a path of IP MTU `ip_mtu` (iwarp's RNICs, tcp's kernel sockets).
TcpEndpointConfig tcp_endpoint_config(const ExperimentConfig& cfg, uint32_t ip_mtu);

}  // namespace rdmasim

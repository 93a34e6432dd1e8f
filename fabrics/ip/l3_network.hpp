// IP networks (roce_v2, iwarp) share their switching: L3 switches with ECMP
// routes, and one addressing plan for hosts.
#pragma once

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

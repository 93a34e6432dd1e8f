// What a host NIC with a network stack offers the programs above it
// (fabric: tcp's kernel stack, or its user-space DPDK stack): TCP
// connections between stream sockets, and UDP datagrams. A workload asks
// the NIC (NicFabric::sockets()), never for the NIC's type.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "core/packet.hpp"

namespace rdmasim {

class Host;
class StreamSocket;
class UdpSocket;

// One end of a TCP connection, as the program holding its socket sees it.
class StreamConnection {
 public:
  virtual ~StreamConnection() = default;
  // Passive open: waits for the peer's SYN.
  virtual void listen() = 0;
  // Segments its TCP sent again so far.
  virtual uint64_t retransmits() const = 0;
};

class SocketStack {
 public:
  virtual ~SocketStack() = default;

  // The two ends of a TCP connection between `client` on this host and
  // `server` on `peer`'s (a host of the same fabric), with their initial
  // sequence numbers: the server's port comes first (`server_port`, or 0:
  // the peer's next from 5201, iperf3's), then the client's (ephemeral,
  // from 49152, RFC 6335); client end first. Neither end listens yet.
  virtual std::pair<std::unique_ptr<StreamConnection>, std::unique_ptr<StreamConnection>> connect(
      StreamSocket& client, SocketStack& peer, StreamSocket& server, uint32_t client_iss, uint32_t server_iss,
      uint16_t server_port = 0) = 0;

  // UDP: binds `s` to the first free port from 5001 and returns it.
  virtual uint16_t bind_udp(UdpSocket& s) = 0;
  // What arrived for a bound port.
  struct UdpPortStats {
    uint64_t received = 0;  // frames for it that reached the NIC
    uint64_t ring_drops = 0, backlog_drops = 0;
  };
  virtual const UdpPortStats& udp_stats(uint16_t port) = 0;
  // A UDP datagram of `bytes` of payload from this host to `to`'s (a host
  // of the same fabric), every header and checksum in place. The payload
  // holds `seq` then a pattern.
  virtual Packet udp_frame(const SocketStack& to, uint16_t sport, uint16_t dport, uint32_t bytes,
                           uint64_t seq) = 0;
};

// The socket stack of `h`'s NIC, which `what` needs; a logic error when
// its NIC offers none (an RDMA fabric: the validate pass refuses first).
SocketStack& socket_stack_of(Host& h, const char* what);

}  // namespace rdmasim

// What a host NIC with a network stack offers the programs above it
// (fabric: tcp's kernel stack, or its user-space DPDK stack): TCP
// connections between stream sockets, and UDP datagrams. A workload asks
// the NIC (NicFabric::sockets()), never for the NIC's type. And what the
// kernel beside an RDMA NIC offers a program's own sockets (HostTcp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "core/packet.hpp"

namespace rdmasim {

struct ExperimentConfig;
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
  // Segments its TCP received so far (a RST that refused its SYN counts).
  virtual uint64_t segments_received() const = 0;
  // The program closes it: a FIN after what it still has to send.
  virtual void close() = 0;
  // Reset: a RST, and nothing more is sent or taken.
  virtual void abort() = 0;
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

// A TCP connection's addresses and ports, this host's end first; IPv4
// addresses as numbers, the first octet in the high byte.
struct TcpEnds {
  uint32_t local_addr = 0, peer_addr = 0;
  uint16_t local_port = 0, peer_port = 0;
};

// The kernel TCP of one host as the sockets API drives it, connection by
// connection: what a program's own sockets (programs/: the out-of-band
// exchange of verbs programs) need of their host. The kernel beside an RDMA
// NIC whose fabric carries IPv4 offers it (host_tcp_beside).
class HostTcp {
 public:
  virtual ~HostTcp() = default;
  // The host's IPv4 address (as TcpEnds holds it).
  virtual uint32_t ipv4() const = 0;
  // The local port of an active open, or of a listen on port 0.
  virtual uint16_t ephemeral_port() = 0;
  // A passive open on `port`: each SYN to it from a new 4-tuple calls
  // `on_syn` with the connection's ends, which must `accept` them; the
  // connection then takes the SYN. `unlisten` ends it.
  using OnSyn = std::function<void(const TcpEnds&)>;
  virtual void listen(uint16_t port, OnSyn on_syn) = 0;
  virtual void unlisten(uint16_t port) = 0;
  // The connection `socket` holds for ends `on_syn` was given, listening.
  virtual std::unique_ptr<StreamConnection> accept(StreamSocket& socket, const TcpEnds& ends) = 0;
  // An active open from an ephemeral port to `addr`:`port`: the socket's
  // connect() sends the SYN.
  virtual std::unique_ptr<StreamConnection> connect(StreamSocket& socket, uint32_t addr, uint16_t port) = 0;
};

// The kernel beside `h`'s RDMA NIC, or null when its fabric carries no
// IPv4. Its TCP takes the experiment's `tcp:` options and the host's
// socket buffers; initial sequence numbers come from `seed`. Defined with
// that kernel (fabrics/tcp/host_kernel.cpp).
std::unique_ptr<HostTcp> host_tcp_beside(Host& h, const ExperimentConfig& cfg, uint64_t seed);

// The socket stack of `h`'s NIC, which `what` needs; a logic error when
// its NIC offers none (an RDMA fabric: the validate pass refuses first).
SocketStack& socket_stack_of(Host& h, const char* what);

}  // namespace rdmasim

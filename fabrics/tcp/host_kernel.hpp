// The kernel of a host whose RDMA NIC is also its Ethernet interface on a
// fabric that carries IP (roce_v2, iwarp over IPv4: IpNic): the programs
// rdmasim runs open TCP sockets there for their out-of-band exchange, as
// they do on real hosts, where the same port carries RoCE (or the iWARP
// offload's TCP) and the kernel's own TCP.
//
// A frame the RDMA engine does not take comes here through the kernel's
// receive path on the host's CPU (NetRx: DMA, interrupt, softirq, per-frame
// protocol cost) and reaches its connection (KernelIp, kernel_tcp.hpp) by
// 4-tuple. A SYN to a port a socket listens on makes a connection for it
// (the listener's `on_syn`); a SYN to any other port is answered with a
// RST, as Linux's tcp_v4_send_reset does, unless the RDMA engine listens
// there itself (iwarp's passive ends); anything else is dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "core/random.hpp"
#include "core/ring.hpp"
#include "fabrics/ip/tcp/tcp_connection.hpp"
#include "fabrics/ip/wire/tcp.hpp"
#include "fabrics/tcp/kernel_ip.hpp"
#include "nodes/host/kernel/net_rx.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/rnic.hpp"

namespace rdmasim {

struct ExperimentConfig;
class IpNic;
class KernelTcp;

class HostKernel final : public TxSource, public HostTcp {
 public:
  // The kernel beside `h`'s NIC, or null when its fabric carries no IPv4
  // (host_tcp_beside, nodes/host/kernel/socket_stack.hpp, says the rest).
  static std::unique_ptr<HostKernel> beside(Host& h, const ExperimentConfig& cfg, uint64_t seed);
  ~HostKernel() override;
  HostKernel(const HostKernel&) = delete;
  HostKernel& operator=(const HostKernel&) = delete;

  KernelIp& ip() { return ip_; }
  const NetRx& rx() const { return *rx_; }

  // HostTcp. Its connections are KernelTcps that acknowledge a SYN-ACK at
  // once, as Linux does (KernelTcp::set_immediate_handshake_ack).
  uint32_t ipv4() const override { return ip_.self().ipv4.to_u32(); }
  // Linux's ip_local_port_range starts at 32768 (below the 49152.. of
  // iwarp's QP connections, which never clash).
  uint16_t ephemeral_port() override { return next_ephemeral_++; }
  void listen(uint16_t port, OnSyn on_syn) override { listeners_[port] = std::move(on_syn); }
  void unlisten(uint16_t port) override { listeners_.erase(port); }
  std::unique_ptr<StreamConnection> accept(StreamSocket& socket, const TcpEnds& ends) override;
  std::unique_ptr<StreamConnection> connect(StreamSocket& socket, uint32_t addr, uint16_t port) override;

  // The initial sequence number of a new connection.
  uint32_t iss() { return static_cast<uint32_t>(rng_.next()); }

  // TxSource: the RSTs it answers with.
  bool has_tx() const override { return !resets_.empty(); }
  Packet next_frame() override { return resets_.take_front(); }

  uint64_t discarded() const { return discarded_; }

 private:
  HostKernel(Host& h, NicFabric& nic, const IpEndpoint& self, const TcpEndpointConfig& tcp, uint64_t seed,
             IpNic& ipnic);
  // IP and TCP input of a frame the softirq has paid for.
  void deliver(Packet p);
  void reset(const ConstIpv4View& ip, const ConstTcpView& tcp, size_t payload);
  std::unique_ptr<KernelTcp> open(StreamSocket& socket, const TcpEnds& ends);

  Host& host_;
  NicFabric& nic_;
  IpNic& ipnic_;
  KernelIp ip_;
  std::unique_ptr<NetRx> rx_;
  std::map<uint16_t, OnSyn> listeners_;
  Ring<Packet> resets_;
  Rng rng_;
  uint16_t next_ephemeral_ = 32768;
  uint64_t discarded_ = 0;
};

}  // namespace rdmasim

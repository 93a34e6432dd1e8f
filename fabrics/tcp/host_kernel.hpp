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
#include "nodes/host/rnic.hpp"

namespace rdmasim {

struct ExperimentConfig;
class IpNic;

class HostKernel final : public TxSource {
 public:
  // The kernel beside `h`'s NIC, or null when its fabric carries no IPv4.
  // Its TCP takes the experiment's `tcp:` options and the host's socket
  // buffers; initial sequence numbers come from `seed`.
  static std::unique_ptr<HostKernel> beside(Host& h, const ExperimentConfig& cfg, uint64_t seed);
  ~HostKernel() override;
  HostKernel(const HostKernel&) = delete;
  HostKernel& operator=(const HostKernel&) = delete;

  KernelIp& ip() { return ip_; }
  const NetRx& rx() const { return *rx_; }

  // A passive open on `port`: each SYN to it from a new 4-tuple calls
  // `on_syn` with the connection's flow (local end first); it must attach
  // a listening KernelTcp for that flow, which then takes the SYN.
  using OnSyn = std::function<void(const TcpFlow&)>;
  void listen(uint16_t port, OnSyn on_syn) { listeners_[port] = std::move(on_syn); }
  void unlisten(uint16_t port) { listeners_.erase(port); }
  // An active open's local port: Linux's ip_local_port_range starts at
  // 32768 (below the 49152.. of iwarp's QP connections, which never clash).
  uint16_t ephemeral_port() { return next_ephemeral_++; }
  // The initial sequence number of a new connection.
  uint32_t iss() { return static_cast<uint32_t>(rng_.next()); }

  // TxSource: the RSTs it answers with.
  bool has_tx() const override { return !resets_.empty(); }
  Packet next_frame() override { return resets_.take_front(); }

  uint64_t discarded() const { return discarded_; }

 private:
  HostKernel(Host& h, NicFabric& nic, const IpEndpoint& self, const TcpEndpointConfig& tcp, uint64_t seed,
             const IpNic& ipnic);
  // IP and TCP input of a frame the softirq has paid for.
  void deliver(Packet p);
  void reset(const ConstIpv4View& ip, const ConstTcpView& tcp, size_t payload);

  Host& host_;
  NicFabric& nic_;
  const IpNic& ipnic_;
  KernelIp ip_;
  std::unique_ptr<NetRx> rx_;
  std::map<uint16_t, OnSyn> listeners_;
  Ring<Packet> resets_;
  Rng rng_;
  uint16_t next_ephemeral_ = 32768;
  uint64_t discarded_ = 0;
};

}  // namespace rdmasim

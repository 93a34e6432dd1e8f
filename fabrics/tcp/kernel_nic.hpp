// `fabric: tcp`, the kernel network stack's baseline (or, with host.stack:
// dpdk, a user-space stack on poll-mode cores): a plain Ethernet NIC
// (no RDMA) whose frames are Ethernet + IPv4 + UDP or TCP, received through
// the kernel's receive path on the host's CPU (nodes/host/kernel/net_rx.hpp)
// and handed to sockets. What RDMA's kernel bypass removes is all here: the
// interrupt, the softirq's protocol work per frame, the system call and the
// copy between kernel and user memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "fabrics/ip/l3_network.hpp"
#include "fabrics/ip/tcp/tcp_config.hpp"
#include "fabrics/tcp/kernel_ip.hpp"
#include "nodes/host/dpdk/poll_mode_driver.hpp"
#include "nodes/host/host.hpp"
#include "nodes/host/kernel/net_rx.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/udp_socket.hpp"

namespace rdmasim {

class KernelTcp;

class KernelNic final : public NicFabric, public SocketStack {
 public:
  // With host.stack: dpdk the frames go to a poll-mode driver (and a
  // user-space stack) instead of the kernel's receive path.
  KernelNic(Host& host, const IpEndpoint& self, const TcpEndpointConfig& tcp);
  ~KernelNic() override;

  size_t headroom() const override;
  // There are no queue pairs on a plain Ethernet NIC.
  std::unique_ptr<verbs::QueuePair> create_qp(verbs::Device&, verbs::ProtectionDomain&, uint32_t,
                                              const verbs::QpInitAttr&) override;
  void receive(Packet p) override;
  // UDP and IPv4 checksums are written when a frame is built; TCP's when
  // someone observes the frame (seal_kernel_frame).
  void seal(Packet& p) const override { seal_kernel_frame(p); }
  // The kernel's receive path, or the user-space stack's poll-mode driver.
  std::optional<StackReport> stack_report() const override;
  SocketStack* sockets() override { return this; }

  Host& host() const { return host_; }
  const IpEndpoint& self() const { return ip_.self(); }
  // The kernel's receive path; null with the user-space stack.
  const NetRx* rx() const { return rx_.get(); }
  // The poll-mode driver of the user-space stack; null with the kernel's.
  const PollModeDriver* pmd() const { return pmd_.get(); }

  // SocketStack: TCP connections (kernel_tcp.hpp) and UDP datagrams;
  // `peer` and `to` are KernelNics too (one fabric's hosts).
  std::pair<std::unique_ptr<StreamConnection>, std::unique_ptr<StreamConnection>> connect(
      StreamSocket& client, SocketStack& peer, StreamSocket& server, uint32_t client_iss, uint32_t server_iss,
      uint16_t server_port) override;
  uint16_t bind_udp(UdpSocket& s) override;
  const UdpPortStats& udp_stats(uint16_t port) override { return udp_[port].stats; }
  Packet udp_frame(const SocketStack& to, uint16_t sport, uint16_t dport, uint32_t bytes,
                   uint64_t seq) override;

  // Frames the protocols refused: a bad checksum, not for this host, no socket.
  uint64_t discarded() const { return discarded_; }

  // TCP (kernel_tcp.hpp): the connections and their frames' headers.
  KernelIp& ip() { return ip_; }
  uint16_t listen_port() { return next_listen_++; }        // a server's port, from 5201 (iperf3's)
  uint16_t ephemeral_port() { return next_ephemeral_++; }  // a client's, from 49152 (RFC 6335)
  // Fills the TCP checksum of an Ethernet + IPv4 + TCP frame whose checksum
  // was left for later (meta.crc_pending); other frames are complete.
  static void seal_kernel_frame(Packet& p);

 private:
  struct Bound {
    UdpSocket* socket = nullptr;
    UdpPortStats stats;
  };
  // IP and UDP input for one frame (the softirq has paid its CPU time).
  void deliver(Packet p);
  // The UDP destination port of an Ethernet + IPv4 + UDP frame, if it is one.
  static std::optional<uint16_t> udp_port(const Packet& p);
  static uint32_t rss_hash(const Packet& p);

  Host& host_;
  std::unique_ptr<NetRx> rx_;
  std::unique_ptr<PollModeDriver> pmd_;
  std::map<uint16_t, Bound> udp_;
  KernelIp ip_;
  uint16_t next_listen_ = 5201, next_ephemeral_ = 49152;
  uint64_t discarded_ = 0;
};

}  // namespace rdmasim

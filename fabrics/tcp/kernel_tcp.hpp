// A kernel TCP socket's protocol half on `fabric: tcp`: the TCP model of
// fabrics/ip/tcp (the same TcpConnection iWARP runs on its RNIC) driven by
// the host's kernel instead of a NIC (KernelIp: fabric tcp's, or the kernel
// beside an RNIC). It fills and drains a StreamSocket
// (nodes/host/kernel/stream_socket.hpp), which charges the system calls and
// copies; its segments leave through the plain NIC as Ethernet + IPv4 + TCP
// frames, and what arrives reaches it through the kernel's receive path
// (NetRx: interrupt, softirq, per-frame protocol cost) and KernelNic's demux.
//
// The stream is handed to TCP in records that end on MSS boundaries of the
// stream (TcpConnection keeps records whole in a segment), so a segment
// carries up to an MSS of whatever the socket holds, as tcp_sendmsg fills
// skbs up to size_goal. No Nagle (TCP_NODELAY, as latency benchmarks set).
#pragma once

#include <cstdint>

#include "core/ring.hpp"
#include "fabrics/ip/tcp/tcp_connection.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/stream_socket.hpp"
#include "nodes/host/rnic.hpp"

namespace rdmasim {

class KernelIp;
class KernelNic;

class KernelTcp final : public TcpUpper, public TxSource, public StreamTransport, public StreamConnection {
 public:
  // `flow.ip` holds this host's address as src, the peer's as dst.
  KernelTcp(KernelIp& ip, StreamSocket& socket, const TcpFlow& flow, uint32_t iss);
  // On fabric tcp's plain NIC (its KernelIp).
  KernelTcp(KernelNic& nic, StreamSocket& socket, const TcpFlow& flow, uint32_t iss);
  ~KernelTcp() override;
  KernelTcp(const KernelTcp&) = delete;
  KernelTcp& operator=(const KernelTcp&) = delete;

  // StreamConnection.
  void listen() override { tcp_.listen(); }
  uint64_t retransmits() const override { return tcp_.stats().retransmits; }
  uint64_t segments_received() const override { return tcp_.stats().segments_received; }
  void close() override { tcp_.close(); }
  void abort() override { tcp_.abort(); }
  // Sends the ACK that completes an active open as soon as the SYN-ACK is
  // in, as Linux does (tcp_rcv_synsent_state_process: tcp_send_ack from the
  // softirq, before connect() returns), rather than when the NIC next pulls
  // a segment, by which time what the program wrote after connect() carries
  // it. Off by default: the socket workloads of fabric tcp let the first
  // data segment carry it.
  void set_immediate_handshake_ack(bool on) { immediate_handshake_ack_ = on; }
  TcpConnection& tcp() { return tcp_; }
  const TcpConnection& tcp() const { return tcp_; }
  // A segment for this connection, from the TCP header on.
  void receive(Packet p, bool ce) { tcp_.receive(std::move(p), ce); }

  // TcpUpper.
  void tcp_established() override;
  void tcp_receive(std::span<const std::byte> bytes) override { socket_.received(bytes); }
  void tcp_acked(uint64_t) override { socket_.write_space(); }
  void tcp_peer_closed() override { socket_.peer_closed(); }
  void tcp_closed(TcpCloseReason) override { socket_.closed(); }

  // TxSource: the NIC pulls segments when its port can take one.
  bool has_tx() const override { return !built_.empty() || tcp_.has_tx(); }
  Packet next_frame() override;

  // StreamTransport.
  void connect() override { tcp_.connect(); }
  size_t room() const override;
  uint64_t segments(size_t n) const override;
  size_t push(std::span<const std::byte> data) override;
  void consumed(size_t n) override { tcp_.consume(n); }

 private:
  void doorbell();  // the driver posts a transmit descriptor: the NIC will pull
  KernelIp& ip_;
  StreamSocket& socket_;
  TcpConnection tcp_;
  bool immediate_handshake_ack_ = false;
  Ring<TcpTx> built_;  // segments built ahead of the NIC's pull (the handshake's ACK)
};

}  // namespace rdmasim

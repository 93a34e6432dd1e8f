// A kernel stream socket (SOCK_STREAM) as a program sees it through system
// calls, and as the kernel's protocol code fills and drains it: the part of
// Linux's TCP socket that sits between a process and the protocol. The
// same socket serves a DPDK-style user-space stack with that stack's costs
// (socket_costs.hpp): calls instead of system calls, no copy on receive,
// waits that spin.
//
//   send():  tcp_sendmsg. The system call (`kernel.syscall`), then the
//            payload is copied from user memory into the socket's send
//            buffer (`copy_bandwidth`) as far as `sndbuf` allows, and every
//            segment that makes is passed down (tcp_write_xmit, ip_output,
//            the driver's transmit: `transport_tx` each), all in the
//            caller's process context. A full send buffer puts the caller to
//            sleep (sk_stream_wait_memory) until ACKs free room
//            (sk_stream_write_space wakes it): a blocking socket's send
//            returns when all of its bytes are in the kernel.
//   recv():  tcp_recvmsg. The system call, then the copy of what the
//            receive queue holds (up to the buffer) to user memory; an empty
//            queue puts the caller to sleep until the softirq queues data
//            (sk_data_ready). Reading frees receive buffer, which opens the
//            window the protocol advertises.
//
// The protocol below (the TCP connection, with its own send-buffer and
// window accounting) is a StreamTransport; the softirq's per-frame cost of
// getting data here is NetRx's (net_rx.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/payload.hpp"
#include "core/task.hpp"
#include "core/units.hpp"
#include "nodes/host/cpu/cpu.hpp"
#include "nodes/host/kernel/socket_costs.hpp"

namespace rdmasim {

// The protocol under a stream socket.
class StreamTransport {
 public:
  // Bytes the send buffer can take now (0 when the connection cannot send).
  virtual size_t room() const = 0;
  // The segments `n` more bytes would make, given what is queued.
  virtual uint64_t segments(size_t n) const = 0;
  // Queues data (they are copied); returns the bytes it took, room() or fewer.
  virtual size_t push(std::span<const std::byte> data) = 0;
  // Active open (the SYN goes out).
  virtual void connect() = 0;
  // The reader has taken `n` bytes: receive buffer to give back (the window).
  virtual void consumed(size_t n) = 0;

 protected:
  ~StreamTransport() = default;
};

class StreamSocket {
 public:
  StreamSocket(Simulator& sim, const SocketCosts& costs);
  StreamSocket(const StreamSocket&) = delete;
  StreamSocket& operator=(const StreamSocket&) = delete;

  void attach(StreamTransport& t) { transport_ = &t; }

  // Protocol side (softirq context; its CPU time is already paid).
  void established();
  void received(std::span<const std::byte> bytes);  // the next in-order bytes
  void write_space();                               // ACKs freed send buffer
  void peer_closed();                               // the peer's FIN: reads end once the queue is empty
  void closed();                                    // reset, timed out or closed: calls fail

  // System calls of process `p` on its core. Each ends when the call
  // returns; `ok` is false when the connection is gone.
  // connect(): the system call opens the connection and returns when it is
  // established; accept(): waits for an established connection (the
  // protocol listens already), then the system call returns it.
  Task connect(Cpu& cpu, Process& p, bool& ok);
  Task accept(Cpu& cpu, Process& p, bool& ok);
  // `data` may be computed (core/payload.hpp): its bytes are made only as
  // the send buffer takes them, as a program would fill a buffer it sends
  // from, so a large message costs its send buffer's room, not its size.
  Task send(Cpu& cpu, Process& p, Payload data, bool& ok);
  Task send(Cpu& cpu, Process& p, std::span<const std::byte> data, bool& ok) {
    return send(cpu, p, Payload(data), ok);
  }
  // Returns at least one byte unless the connection is gone or the peer
  // has closed and everything it sent was read (got = 0).
  Task recv(Cpu& cpu, Process& p, std::span<std::byte> out, size_t& got);

  bool is_established() const { return established_; }
  bool is_closed() const { return closed_; }
  bool is_peer_closed() const { return peer_closed_; }
  size_t queued() const { return rx_size_; }  // bytes waiting to be read

  struct Stats {
    uint64_t sends = 0, recvs = 0;  // system calls
    uint64_t send_waits = 0;        // sends that slept on a full send buffer
    uint64_t recv_waits = 0;        // recvs that slept on an empty queue
    uint64_t segments_pushed = 0;   // segments passed down by send()
    uint64_t bytes_sent = 0, bytes_received = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  SocketCosts k_;
  StreamTransport* transport_ = nullptr;
  // Pushes a payload's bytes, making a computed one's as they go.
  size_t push(const Payload& bytes);
  Trigger state_, writable_, readable_;
  bool established_ = false, closed_ = false;
  bool peer_closed_ = false;
  // The receive queue: a ring of bytes that grows as needed, and is freed
  // when read empty if larger than this.
  static constexpr size_t kKeptReceiveBytes = 64 * 1024;
  std::vector<std::byte> rx_;
  size_t rx_head_ = 0, rx_size_ = 0;
  Stats stats_;
};

}  // namespace rdmasim

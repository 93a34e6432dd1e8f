// `kind: udp`: kernel UDP datagrams, the receive-livelock experiment of
// Mogul and Ramakrishnan (1997). A traffic generator on `from` offers
// `rate` of `size`-byte datagrams for `duration`, paced evenly and
// without CPU limits of its own (as the packet generators of livelock
// studies are), so that only the receiving host is measured. On `to`, a
// program loops on recvmsg: a system call and the copy to user memory per
// datagram, then `app_cost` of its own work. Everything the receiving
// kernel does runs on the same CPU (nodes/host/kernel/net_rx.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/task.hpp"
#include "nodes/host/host.hpp"
#include "nodes/host/kernel/socket_costs.hpp"
#include "nodes/host/kernel/socket_stack.hpp"
#include "nodes/host/kernel/udp_socket.hpp"
#include "topologies/config.hpp"

namespace rdmasim {

class UdpJob final : public TxSource {
 public:
  UdpJob(Simulator& sim, Host& from, Host& to, const WorkloadConfig& w);
  ~UdpJob() override;

  void start();
  bool finished() const;

  struct Counts {
    uint64_t offered = 0;   // datagrams the generator sent
    uint64_t received = 0;  // ... that reached the receiving NIC
    uint64_t ring_drops = 0, backlog_drops = 0, socket_drops = 0;
    uint64_t delivered = 0;          // ... that the program received
    uint64_t delivered_in_time = 0;  // ... while the load was offered (the rest drained after)
    uint64_t dropped() const { return ring_drops + backlog_drops + socket_drops; }
  };
  Counts counts() const;
  uint64_t delivered_bytes() const { return delivered_bytes_; }
  const std::vector<int64_t>& latency_ps() const { return latency_ps_; }
  Time first_sent() const { return first_; }
  Time last_delivered() const { return last_; }

  // TxSource: the generator's frames, paced at `rate`.
  bool has_tx() const override;
  Packet next_frame() override;
  Time not_before() const override { return next_; }

 private:
  Task receiver();

  Simulator& sim_;
  Host& from_;
  Host& to_;
  const WorkloadConfig& w_;
  SocketStack& tx_;
  SocketStack& rx_;
  UdpSocket socket_;
  Process& process_;
  uint16_t port_;
  Time gap_;   // between datagrams at the offered rate
  Time next_;  // the next datagram's time
  Time end_;   // no datagram is offered from then on
  uint64_t offered_ = 0, delivered_ = 0, delivered_in_time_ = 0, delivered_bytes_ = 0;
  Time first_ = Time::max(), last_;
  std::vector<int64_t> latency_ps_;
};

}  // namespace rdmasim

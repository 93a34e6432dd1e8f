// The out-of-band sockets of the programs rdmasim runs where the fabric
// carries IPv4 (roce_v2, iwarp; docs/programs.md): kernel TCP sockets of
// the hosts (HostTcp, nodes/host/kernel/socket_stack.hpp: the kernel
// beside the RDMA NIC), whose segments cross the
// simulated network beside the RDMA traffic and are in the captures. The
// calls cost what they cost the socket workloads of fabric tcp: the system
// call, the copies, the segments down the stack, and on receipt the
// interrupt and softirq.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/engine.hpp"
#include "programs/oob_sockets.hpp"

namespace rdmasim {

struct Network;
class HostTcp;
class StreamSocket;
struct TcpEnds;

class KernelSockets final : public OobSockets {
 public:
  // Null when the fabric does not carry IPv4 (ib, roce_v1, IPv6).
  static std::unique_ptr<KernelSockets> make(Network& net);
  ~KernelSockets() override;

  uint32_t address(int h) const override;
  bool charges_calls() const override { return true; }

  int64_t listen(int h, uint16_t port) override;
  Task accept(Process& p, uint64_t listener, int64_t& out, uint32_t& peer_addr, uint16_t& peer_port) override;
  Task connect(Process& p, int h, uint32_t addr, uint16_t port, int64_t& out) override;
  Task send(Process& p, uint64_t conn, std::span<const char> data, int64_t& ret) override;
  Task recv(Process& p, uint64_t conn, size_t max, bool nonblocking, bool wait_all, std::vector<char>& out,
            int64_t& ret) override;
  void close(uint64_t id, bool listener) override;

 private:
  explicit KernelSockets(Network& net);
  struct Conn;
  Conn* conn(uint64_t id);
  // A connection of host `h`'s kernel for ends `on_syn` was given (its id).
  uint64_t accepted(int h, const TcpEnds& ends);

  Network& net_;
  std::vector<std::unique_ptr<HostTcp>> kernels_;  // by host; outlive the connections
  std::map<uint64_t, std::unique_ptr<Conn>> conns_;
  OobListeners listeners_;  // their backlogs: connections their SYNs made, not yet accepted
  uint64_t next_id_ = 1;
};

}  // namespace rdmasim

// The out-of-band stream sockets of the programs rdmasim runs
// (docs/programs.md): the TCP connections over which ibv_*_pingpong and
// perftest swap QP numbers, PSNs and GIDs before any verbs traffic. Where
// the fabric carries IPv4 they are the hosts' kernel TCP on the simulated
// network (kernel_sockets.hpp); elsewhere a modelled side channel
// (side_channel.hpp). Results are what the system calls give: -errno on
// failure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/task.hpp"

namespace rdmasim {

class Process;

class OobSockets {
 public:
  virtual ~OobSockets() = default;
  // The IPv4 address (host order) under which host `h` is reached ({NAME} in `run`).
  virtual uint32_t address(int h) const = 0;
  // Whether accept, connect, send and recv charge the host's CPU model
  // themselves (the kernel's socket calls and copies); if not, the caller
  // charges each as one system call.
  virtual bool charges_calls() const = 0;

  // Calls of process `p` of host `h`.
  virtual int64_t listen(int h, uint16_t port) = 0;
  // The next connection to `listener` (its id), and the peer's address and port.
  virtual Task accept(Process& p, uint64_t listener, int64_t& out, uint32_t& peer_addr,
                      uint16_t& peer_port) = 0;
  virtual Task connect(Process& p, int h, uint32_t addr, uint16_t port, int64_t& out) = 0;
  virtual Task send(Process& p, uint64_t conn, std::span<const char> data, int64_t& ret) = 0;
  // Up to `max` bytes (all `max` with `wait_all`); 0 once the peer closed;
  // -EAGAIN when `nonblocking` finds none.
  virtual Task recv(Process& p, uint64_t conn, size_t max, bool nonblocking, bool wait_all,
                    std::vector<char>& out, int64_t& ret) = 0;
  virtual void close(uint64_t id, bool listener) = 0;
};

}  // namespace rdmasim

// The out-of-band stream sockets of the programs rdmasim runs
// (docs/programs.md): the TCP connections over which ibv_*_pingpong and
// perftest swap QP numbers, PSNs and GIDs before any verbs traffic. Where
// the fabric carries IPv4 they are the hosts' kernel TCP on the simulated
// network (kernel_sockets.hpp); elsewhere a modelled side channel
// (side_channel.hpp). Results are what the system calls give: -errno on
// failure.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
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

// The listening sockets of an OobSockets: each a host's port and the
// connections that arrived on it and were not yet accepted (the backlog).
class OobListeners {
 public:
  explicit OobListeners(Simulator& sim) : sim_(sim) {}

  // Whether host `h` has an open listener on `port` (listen's EADDRINUSE).
  bool in_use(int h, uint16_t port) const;
  // Opens listener `id` (the owner's id, unique among its sockets).
  void open(uint64_t id, int h, uint16_t port);
  // The open listener on host `h`'s `port`, or 0.
  uint64_t on(int h, uint16_t port) const;
  bool is_open(uint64_t id) const;
  int host(uint64_t id) const { return listeners_.at(id).host; }
  uint16_t port(uint64_t id) const { return listeners_.at(id).port; }
  // A connection arrived on listener `id`.
  void arrive(uint64_t id, uint64_t conn);
  // accept's wait: the next connection of listener `id`, or -EBADF once it
  // is not (or no longer) open.
  Task next(uint64_t id, int64_t& out);
  // Closes listener `id` (nothing if it is not open); returns the
  // connections nobody accepted.
  std::deque<uint64_t> close(uint64_t id);

 private:
  struct Listener {
    int host = 0;
    uint16_t port = 0;
    std::deque<uint64_t> backlog;
    std::unique_ptr<Trigger> ready;
    bool closed = false;
  };
  Simulator& sim_;
  std::map<uint64_t, Listener> listeners_;
};

}  // namespace rdmasim

// The out-of-band channel of the programs rdmasim runs (docs/programs.md):
// the TCP connections over which ibv_*_pingpong and perftest swap QP
// numbers, PSNs and GIDs before any verbs traffic. It is modelled, not put
// on the simulated wire: a connection is a byte stream each way, a message
// arrives `one_way` after it was sent (the path's propagation and
// switching, plus the two hosts' socket stacks), a connect takes a round
// trip. Programs address hosts by side_address() ({NAME} in `run`).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/task.hpp"

namespace rdmasim {

class SideChannel {
 public:
  // `one_way(a, b)`: a message's time from host a to host b.
  SideChannel(Simulator& sim, std::vector<uint32_t> addresses, std::function<Time(int, int)> one_way);

  // The IPv4 address (host order) under which host `h` is reached.
  uint32_t address(int h) const { return addresses_[static_cast<size_t>(h)]; }
  static std::string dotted(uint32_t a);

  // Socket calls of host `h`; results as the system calls give them (-errno on failure).
  int64_t listen(int h, uint16_t port);
  // co_await: the next connection to `listener` (its id), and the peer's address and port.
  Task accept(uint64_t listener, int64_t& out, uint32_t& peer_addr, uint16_t& peer_port);
  Task connect(int h, uint32_t addr, uint16_t port, int64_t& out);
  int64_t send(uint64_t conn, const void* data, size_t n);
  // Up to `max` bytes (all `max` with `wait_all`); 0 once the peer closed; -EAGAIN when `nonblocking` finds
  // none.
  Task recv(uint64_t conn, size_t max, bool nonblocking, bool wait_all, std::vector<char>& out, int64_t& ret);
  void close(uint64_t id, bool listener);

 private:
  struct End {
    int host = 0;
    uint16_t port = 0;
    std::deque<char> in;  // arrived, not yet read
    bool peer_closed = false, closed = false;
    bool reset = false;  // the peer answered data with an RST: writes fail with EPIPE
    uint64_t peer = 0;
    std::unique_ptr<Trigger> readable;
  };
  struct Listener {
    int host = 0;
    uint16_t port = 0;
    std::deque<uint64_t> backlog;  // connection ends, arrived
    std::unique_ptr<Trigger> ready;
    bool closed = false;
  };
  Simulator& sim_;
  std::vector<uint32_t> addresses_;
  std::function<Time(int, int)> one_way_;
  std::map<uint64_t, End> ends_;
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_id_ = 1;
  uint16_t next_port_ = 40000;  // ephemeral ports of connecting ends
};

}  // namespace rdmasim

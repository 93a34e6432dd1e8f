// The out-of-band sockets of the programs rdmasim runs where the fabric
// carries no IP (ib, roce_v1; docs/programs.md). It is modelled, not put
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
#include "programs/oob_sockets.hpp"

namespace rdmasim {

class SideChannel final : public OobSockets {
 public:
  // `one_way(a, b)`: a message's time from host a to host b.
  SideChannel(Simulator& sim, std::vector<uint32_t> addresses, std::function<Time(int, int)> one_way);

  uint32_t address(int h) const override { return addresses_[static_cast<size_t>(h)]; }
  static std::string dotted(uint32_t a);
  // Each call is one system call of the caller's.
  bool charges_calls() const override { return false; }

  int64_t listen(int h, uint16_t port) override;
  Task accept(Process& p, uint64_t listener, int64_t& out, uint32_t& peer_addr, uint16_t& peer_port) override;
  Task connect(Process& p, int h, uint32_t addr, uint16_t port, int64_t& out) override;
  Task send(Process& p, uint64_t conn, std::span<const char> data, int64_t& ret) override;
  Task recv(Process& p, uint64_t conn, size_t max, bool nonblocking, bool wait_all, std::vector<char>& out,
            int64_t& ret) override;
  void close(uint64_t id, bool listener) override;

 private:
  int64_t send_now(uint64_t conn, std::span<const char> data);
  struct End {
    int host = 0;
    uint16_t port = 0;
    std::deque<char> in;  // arrived, not yet read
    bool peer_closed = false, closed = false;
    bool reset = false;  // the peer answered data with an RST: writes fail with EPIPE
    uint64_t peer = 0;
    std::unique_ptr<Trigger> readable;
  };
  Simulator& sim_;
  std::vector<uint32_t> addresses_;
  std::function<Time(int, int)> one_way_;
  std::map<uint64_t, End> ends_;
  OobListeners listeners_;  // their backlogs: connection ends, arrived
  uint64_t next_id_ = 1;
  uint16_t next_port_ = 40000;  // ephemeral ports of connecting ends
};

}  // namespace rdmasim

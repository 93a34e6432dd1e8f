// A host: memory, an RDMA NIC on one port, and a CPU whose busy time the
// host's programs account for. How a program learns of completions decides
// what it costs: polling keeps a core busy the whole time it waits,
// interrupts cost a handler and a wake-up each, hybrid spins a while first.
#pragma once

#include <memory>
#include <string>

#include "core/task.hpp"
#include "nodes/host/memory.hpp"
#include "nodes/host/rnic.hpp"
#include "nodes/host/verbs.hpp"
#include "nodes/node.hpp"

namespace rdmasim {

class Host final : public Node {
public:
  Host(Simulator& sim, PacketPool& pool, std::string name, const NicConfig& nic, const HostConfig& cfg);
  ~Host() override;

  void receive(Port& in, Packet p) override;

  HostMemory& memory() { return memory_; }
  Rnic& nic() { return *nic_; }
  verbs::Device& device() { return nic_->device(); }
  const HostConfig& config() const { return cfg_; }

  // CPU accounting.
  void charge(Time t) { cpu_busy_ += t; }
  Time cpu_busy() const { return cpu_busy_; }
  uint64_t interrupts() const { return interrupts_; }

  // The CPU side of ibv_post_send: building the WQE and ringing the doorbell,
  // plus copying inline data to the NIC by programmed I/O.
  void charge_post(uint64_t inline_bytes);
  // Waits until `cq` holds a completion, charging the CPU as the host's
  // completion mode says. co_await host.wait(cq).
  Task wait(verbs::CompletionQueue& cq);

private:
  HostMemory memory_;
  HostConfig cfg_;
  std::unique_ptr<Rnic> nic_;
  Time cpu_busy_;
  uint64_t interrupts_ = 0;
};

}  // namespace rdmasim

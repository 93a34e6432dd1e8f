// A host: memory, an RDMA NIC on one port, and a CPU of `host.cores` cores
// its programs run on (nodes/host/cpu). How a program learns of completions
// decides what it costs: polling keeps its core spinning the whole time it
// waits, interrupts cost a handler and a context switch each but free the
// core meanwhile, hybrid spins a while first.
#pragma once

#include <memory>
#include <string>

#include "core/task.hpp"
#include "nodes/host/cpu/cpu.hpp"
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
  void link_changed(Port& p, bool up) override;

  HostMemory& memory() { return memory_; }
  Rnic& nic() { return *nic_; }
  verbs::Device& device() { return nic_->device(); }
  const HostConfig& config() const { return cfg_; }

  Cpu& cpu() { return cpu_; }
  const Cpu& cpu() const { return cpu_; }
  // A program on this host (pinned to a core, see nodes/host/cpu/cpu.hpp).
  // `fair`: it shares its core by CPU time with other fair processes
  // (kernel-socket programs and ksoftirqd, nodes/host/cpu/cpu.hpp).
  Process& spawn(std::string name, Process::Kind kind = Process::Kind::io, bool fair = false) {
    return cpu_.spawn(std::move(name), kind, fair);
  }
  Time cpu_busy() const { return cpu_.busy(); }
  uint64_t interrupts() const { return interrupts_; }

  // co_await host.post(p, n): the CPU side of ibv_post_send, on p's core:
  // building the WQE and ringing the doorbell, plus copying `inline_bytes`
  // of inline data to the NIC by programmed I/O.
  Cpu::RunAwaiter post(Process& p, uint64_t inline_bytes);
  // co_await host.wait(p, cq): `p` polls `cq` until it holds a completion,
  // as the host's completion mode says, on p's core.
  Task wait(Process& p, verbs::CompletionQueue& cq);

 private:
  HostMemory memory_;
  HostConfig cfg_;
  std::unique_ptr<Rnic> nic_;
  Cpu cpu_;
  uint64_t interrupts_ = 0;
};

}  // namespace rdmasim

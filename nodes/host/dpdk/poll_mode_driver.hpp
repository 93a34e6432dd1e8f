// A DPDK poll-mode driver and the user-space stack's receive side, on a
// host's CPU: what kernel bypass without RDMA looks like (docs/host.md,
// "DPDK"). The NIC DMAs each frame into the receive queue of one of
// `dpdk.cores` queues (RSS: by the flow's hash); no interrupt is raised,
// ever. Each queue belongs to a poll-mode core, isolated from the
// scheduler, whose loop never sleeps (as rte_eal's lcores):
//
//   for (;;) {
//     n = rte_eth_rx_burst(port, queue, mbufs, burst);   // `poll`
//     for each of the n: IP and TCP/UDP input            // `rx_frame` each
//   }
//
// A burst that finds nothing is spinning, not work: the core stays 100%
// busy either way, its time split between user (the bursts that found
// frames and the protocol work) and poll (spinning on an empty queue).
// A full queue drops what the NIC brings (rx_missed), at no CPU cost.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "core/ring.hpp"
#include "core/task.hpp"
#include "nodes/host/cpu/cpu.hpp"
#include "nodes/host/host_config.hpp"

namespace rdmasim {

class PollModeDriver {
 public:
  // Takes cores 0 .. dpdk.cores - 1 of `cpu` out of the scheduler's hands
  // and starts a poll loop on each.
  PollModeDriver(Simulator& sim, Cpu& cpu, const DpdkConfig& cfg);
  PollModeDriver(const PollModeDriver&) = delete;
  PollModeDriver& operator=(const PollModeDriver&) = delete;

  // IP and above for one frame, once its burst's CPU time is paid.
  void set_deliver(std::function<void(Packet)> f) { deliver_ = std::move(f); }
  // A frame the NIC dropped: its queue was full.
  void set_on_drop(std::function<void(const Packet&)> f) { on_drop_ = std::move(f); }

  // The NIC has DMA'd a frame whose flow hashes to `hash` (RSS).
  void receive(Packet p, uint32_t hash);

  struct Stats {
    uint64_t frames = 0;      // taken into a queue
    uint64_t ring_drops = 0;  // the queue was full
    uint64_t bursts = 0;      // rx bursts that found frames
    uint64_t processed = 0;   // frames handed to the stack
    uint64_t largest_burst = 0;
  };
  const Stats& stats() const { return stats_; }
  uint32_t queues() const { return static_cast<uint32_t>(queues_.size()); }

 private:
  struct Queue {
    explicit Queue(Simulator& sim) : arrived(sim) {}
    Ring<Packet> ring;
    Trigger arrived;
    Process* lcore = nullptr;
  };
  Task poll_loop(Queue& q);

  Simulator& sim_;
  Cpu& cpu_;
  DpdkConfig cfg_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::function<void(Packet)> deliver_;
  std::function<void(const Packet&)> on_drop_;
  Stats stats_;
};

}  // namespace rdmasim

// The kernel's receive path on a host's CPU, as Linux runs it: the NIC
// DMAs frames into its receive ring and raises an interrupt; then either
//
//  - `interrupt` (before NAPI, the "interrupt-driven kernel" of Mogul and
//    Ramakrishnan, "Eliminating receive livelock in an interrupt-driven
//    kernel", ACM TOCS 15(3), 1997): the hard IRQ handler takes every frame
//    off the ring (driver work in IRQ context, netif_rx) into the CPU's
//    backlog and raises NET_RX; the softirq takes frames off the backlog
//    through IP and UDP/TCP to the socket. Each frame costs an interrupt
//    (or each coalesced batch does);
//  - `napi` (Linux since 2.6, Salim et al., "Beyond Softnet", 2001): the
//    hard IRQ only masks the device's interrupt and schedules a NAPI poll;
//    the softirq polls the ring `napi_budget` frames at a time with the
//    interrupt off, and re-enables it when a poll finds fewer than its
//    budget (the ring ran dry). Under overload the interrupt stays off and
//    frames the CPU cannot take are dropped by the NIC at no CPU cost.
//
// Softirq work runs on IRQ exit ahead of every process (Cpu's softirq
// context). When it keeps finding work for longer than softirq_time (or
// softirq_restarts rounds), __do_softirq hands it to ksoftirqd, a process
// that shares the core fairly with the programs (kernel/softirq.c); while
// ksoftirqd is runnable, IRQ exits leave the work to it. With
// `threaded_napi` (Linux 5.12) the polls always run in such a thread.
#pragma once

#include <cstdint>
#include <functional>

#include "core/engine.hpp"
#include "core/packet.hpp"
#include "core/ring.hpp"
#include "core/task.hpp"
#include "core/units.hpp"
#include "nodes/host/cpu/cpu.hpp"
#include "nodes/host/host_config.hpp"

namespace rdmasim {

class NetRx final : public IrqSink {
 public:
  enum class Drop { ring, backlog };
  // Frames the NIC hands up arrive `pcie_latency` after it has them (its
  // DMA write); interrupts reach core `irq_core` as much later (MSI-X).
  NetRx(Simulator& sim, Cpu& cpu, const HostConfig& cfg, int irq_core = 0);
  ~NetRx();
  NetRx(const NetRx&) = delete;
  NetRx& operator=(const NetRx&) = delete;

  // IP and above for one frame, at the end of the softirq round that
  // processed it (its CPU cost, driver_rx + ip_rx + transport_rx, is paid).
  void set_deliver(std::function<void(Packet)> f) { deliver_ = std::move(f); }
  // A frame dropped before the protocols saw it.
  void set_on_drop(std::function<void(const Packet&, Drop)> f) { on_drop_ = std::move(f); }

  // The NIC has DMA'd a frame into host memory: it takes a ring slot.
  void receive(Packet p);

  // ksoftirqd of the IRQ core (created with the NetRx, fair); with
  // threaded NAPI, the NAPI kthread instead.
  Process& ksoftirqd() { return *ksoftirqd_; }
  bool napi() const { return napi_; }
  bool irq_masked() const { return masked_; }

  struct Stats {
    uint64_t frames = 0;         // taken into the ring
    uint64_t ring_drops = 0;     // the ring was full (the NIC drops, no CPU spent)
    uint64_t backlog_drops = 0;  // the backlog was full (after the driver's work)
    uint64_t interrupts = 0;
    uint64_t polls = 0;              // NAPI polls / backlog rounds
    uint64_t processed = 0;          // frames handed to the protocols
    uint64_t ksoftirqd_wakeups = 0;  // times softirq work was deferred to ksoftirqd
  };
  const Stats& stats() const { return stats_; }

 private:
  void irq_handled() override;
  void maybe_interrupt();
  void raise_interrupt();
  void raise_softirq();
  Task do_softirq();
  Task run_ksoftirqd();
  Task net_rx_action(Process& ctx);
  void drop(const Packet& p, Drop why);

  Simulator& sim_;
  Cpu& cpu_;
  const HostConfig cfg_;
  const bool napi_;
  int core_;
  Process* ksoftirqd_;
  std::function<void(Packet)> deliver_;
  std::function<void(const Packet&, Drop)> on_drop_;

  Ring<Packet> ring_;        // the NIC's receive ring, in host memory
  Ring<Packet> backlog_;     // interrupt mode: the CPU's input queue (netif_rx)
  Ring<Packet> batch_;       // frames of the round in progress
  bool irq_raised_ = false;  // an interrupt is on its way or its handler runs
  bool masked_ = false;      // napi: the poll is scheduled, the device interrupt off
  bool pending_ = false;     // NET_RX has work (a NAPI poll scheduled, or backlog)
  bool softirq_running_ = false;
  bool ksoftirqd_running_ = false;
  uint32_t irq_frames_ = 0;  // interrupt mode: frames the handler takes off the ring
  EventId coalesce_;         // interrupt moderation timer
  Stats stats_;
};

}  // namespace rdmasim

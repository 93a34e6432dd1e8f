#include "nodes/host/host.hpp"

namespace rdmasim {

Host::Host(Simulator& sim, PacketPool& pool, std::string name, const NicConfig& nic, const HostConfig& cfg)
    : Node(sim, std::move(name)), cfg_(cfg), cpu_(sim, static_cast<int>(cfg.cores), cfg.context_switch) {
  Port& port = add_port();
  nic_ = std::make_unique<Rnic>(sim, pool, memory_, port, nic);
}

Host::~Host() = default;

void Host::receive(Port& in, Packet p) {
  // The NIC takes the frame off the wire into its own buffers at once.
  in.release_ingress(p);
  nic_->receive(std::move(p));
}

void Host::link_changed(Port&, bool up) {
  // Its one port: the device's port state changes, and it raises the
  // event its programs may wait for (another engine's host: there).
  if (sim().runs(context())) device().port_changed(up);
}

Cpu::RunAwaiter Host::post(Process& p, uint64_t inline_bytes) {
  Time t = cfg_.post_cost;
  // Programmed I/O: the CPU itself stores the bytes into the NIC's
  // write-combining doorbell page, and is busy the whole time.
  if (inline_bytes) t += cfg_.pio_bandwidth.tx_time(inline_bytes);
  return cpu_.run(p, CpuUse::user, t);
}

Task Host::wait(Process& p, verbs::CompletionQueue& cq) {
  // ibv_poll_cq: it finds a completion or nothing, and costs a poll either way.
  co_await cpu_.run(p, CpuUse::user, cfg_.poll_cost);
  if (cq.depth() > 0) co_return;
  // The interrupt is an MSI-X message, a posted PCIe write.
  cq.set_moderation({cfg_.interrupt_coalescing.frames, cfg_.interrupt_coalescing.delay, cfg_.pcie.latency});
  bool came = false;
  switch (cfg_.completion) {
    case Completion::polling:
      // Spinning on ibv_poll_cq: the core polls until the CQE lands.
      cpu_.spin(p);
      co_await cq.next();
      co_await cpu_.run(p, CpuUse::user, cfg_.poll_cost);
      co_return;
    case Completion::hybrid:
      // Spin for a while; if nothing comes, arm the interrupt and sleep.
      cpu_.spin(p);
      co_await cq.next_within(cfg_.hybrid_spin, came);
      if (came) {
        co_await cpu_.run(p, CpuUse::user, cfg_.poll_cost);
        co_return;
      }
      cpu_.stop_spin(p);
      break;
    case Completion::interrupt:
    case Completion::napi:  // the kernel stack's; refused for RDMA programs, which wait by interrupt
      break;
  }
  // ibv_req_notify_cq, then ibv_get_cq_event sleeps: p leaves its core. The
  // interrupt handler wakes it; it polls the CQ once the core is its again.
  co_await cq.interrupt();
  ++interrupts_;
  co_await cpu_.interrupt(p, cfg_.interrupt_cost, CpuUse::user, cfg_.poll_cost);
}

}  // namespace rdmasim
